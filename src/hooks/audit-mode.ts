import { writeSync } from "node:fs";
import type { Registry } from "../registry/registry.js";

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

/** Arranges the exit-time audit. Only called by loader.mjs, and only when a mode is set. */
export function auditAtExit(registry: Registry, mode: AuditMode): void {
  if (mode === "off") return;
  process.on("exit", (code) => {
    const { text, fail } = auditVerdict(registry, mode);
    // Synchronous: the process is exiting.
    if (text !== "") writeSync(2, text);
    if (fail && code === 0) process.exitCode = 1;
  });
}
