import type { Registry } from "../registry/registry.js";

// process.getBuiltinModule, not `import`: building the ES module facade of a builtin costs
// start-up time (node:fs alone about 3 ms), and the loader runs at the start of every process.
const { writeFileSync, writeSync } = process.getBuiltinModule("node:fs");

/** DISPATCH_HOOK_AUDIT: "strict" fails the process on problems, "report" prints the table, unset is silent. */
export type AuditMode = "strict" | "report" | "off";

export function parseAuditMode(value: string | undefined): AuditMode {
  if (value === undefined || value === "" || value === "off" || value === "0") return "off";
  if (value === "strict" || value === "report") return value;
  process.emitWarning(`DISPATCH_HOOK_AUDIT=${JSON.stringify(value)} is not a mode; use "strict" or "report". Reporting instead.`, {
    code: "DISPATCH_HOOK_AUDIT_MODE",
  });
  return "report";
}

/**
 * What the audit says at exit: the table (to stderr) in report mode, or when strict mode finds a
 * problem; and in strict mode a non-zero exit code. Returns the text it printed, for tests.
 */
export function auditVerdict(registry: Registry, mode: AuditMode): { text: string; fail: boolean } {
  if (mode === "off") return { text: "", fail: false };
  const report = registry.verify();
  const fail = mode === "strict" && !report.ok;
  const text = mode === "report" || fail ? `dispatch-hook audit (${mode}):\n${registry.audit.format()}\n` : "";
  return { text, fail };
}

export interface AuditAtExitOptions {
  readonly mode: AuditMode;
  /** DISPATCH_HOOK_AUDIT_FILE: write the report and the events as JSON here (the CLI reads it). */
  readonly file?: string | undefined;
}

/** The machine-readable audit the `dispatch-hook audit` command reads. */
export interface AuditFile {
  readonly version: 1;
  readonly node: string;
  readonly report: ReturnType<Registry["verify"]>;
  readonly events: ReturnType<Registry["audit"]["events"]>;
}

/** Arranges the exit-time audit. Only loader.mjs calls it, and it adds nothing when both are off. */
export function auditAtExit(registry: Registry, options: AuditAtExitOptions): void {
  const { mode, file } = options;
  if (mode === "off" && (file === undefined || file === "")) return;
  // Loaded only when auditing: worker_threads costs start-up time.
  const { isMainThread } = process.getBuiltinModule("node:worker_threads");
  // Workers share the file and the stderr of their process; the main thread speaks for it.
  if (mode === "off" && (file === undefined || file === "" || !isMainThread)) return;
  process.on("exit", (code) => {
    if (file !== undefined && file !== "" && isMainThread) {
      const audit: AuditFile = { version: 1, node: process.versions.node, report: registry.verify(), events: registry.audit.events() };
      writeFileSync(file, JSON.stringify(audit));
    }
    const { text, fail } = auditVerdict(registry, mode);
    // Synchronous: the process is exiting.
    if (text !== "") writeSync(2, text);
    if (fail && code === 0) process.exitCode = 1;
  });
}
