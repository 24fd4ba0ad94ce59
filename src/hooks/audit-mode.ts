/**
 * The exit audit (DISPATCH_HOOK_AUDIT): one per thread, speaking for every registry of every copy
 * of dispatch-hook in it, and for the loaders (see registry/thread-audit.ts).
 */
import { fs, workerThreads } from "../builtins.js";
import { hub } from "../hub.js";
import type { AuditReport } from "../registry/audit-events.js";
import { formatReport } from "../registry/audit-format.js";
import { threadAudit } from "../registry/thread-audit.js";

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
 * problem; and in strict mode a non-zero exit code.
 */
export function auditVerdict(report: AuditReport, mode: AuditMode): { text: string; fail: boolean } {
  if (mode === "off") return { text: "", fail: false };
  const fail = mode === "strict" && !report.ok;
  const text = mode === "report" || fail ? `dispatch-hook audit (${mode}):\n${formatReport(report)}\n` : "";
  return { text, fail };
}

export interface AuditAtExitOptions {
  readonly mode: AuditMode;
  /** DISPATCH_HOOK_AUDIT_FILE: write the report as JSON here (the command line reads it). */
  readonly file?: string | undefined;
}

/** The machine-readable audit the `dispatch-hook audit` command reads. */
export interface AuditFile {
  readonly version: 2;
  readonly node: string;
  readonly report: AuditReport;
}

/**
 * Arranges the thread's exit audit. Only the first caller in a thread does (a second loader, of
 * another copy, finds it claimed), and it adds nothing when both mode and file are off.
 */
export function auditAtExit(options: AuditAtExitOptions): void {
  const { mode } = options;
  const file = options.file === "" ? undefined : options.file;
  if (mode === "off" && file === undefined) return;
  const { isMainThread } = workerThreads();
  // Workers share the file and the stderr of their process; the main thread writes the file.
  if (mode === "off" && !isMainThread) return;
  // One exit audit per thread, whichever copy's loader asks first.
  if (!hub().claimExit()) return;
  process.on("exit", (code) => {
    const report = threadAudit();
    if (file !== undefined && isMainThread) {
      fs.writeFileSync(file, JSON.stringify({ version: 2, node: process.versions.node, report } satisfies AuditFile));
    }
    const { text, fail } = auditVerdict(report, mode);
    // Synchronous: the process is exiting.
    if (text !== "") fs.writeSync(2, text);
    if (fail && code === 0) process.exitCode = 1;
  });
}
