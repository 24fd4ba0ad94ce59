/**
 * How dispatch-hook reads DISPATCH_HOOK_AUDIT. Its values are the modes and the usual booleans, in
 * any case: `strict`; `report`, or 1/true/on/yes; off, or 0/false/no, or unset or empty. Any other
 * value is a warning (DISPATCH_HOOK_AUDIT_MODE) naming the variable and the values it accepts, and
 * the default, off, is used.
 */

/** DISPATCH_HOOK_AUDIT: "strict" fails the process on problems, "report" prints the table, "off" is silent. */
export type AuditMode = "strict" | "report" | "off";

const on = new Set(["1", "true", "on", "yes"]);
const off = new Set(["", "0", "false", "off", "no"]);

/** The mode `value` names; `warn: false` reads it without a warning (for a caller that asks often). */
export function parseAuditMode(value: string | undefined, warn = true): AuditMode {
  const word = value?.trim().toLowerCase();
  if (word === undefined || off.has(word)) return "off";
  if (word === "strict" || word === "report") return word;
  if (on.has(word)) return "report";
  if (warn) {
    process.emitWarning(
      `DISPATCH_HOOK_AUDIT=${JSON.stringify(value)} is not a value it accepts: "strict"; "report" (or 1, true, on, yes); "off" (or 0, false, no, or empty). The audit stays off.`,
      { code: "DISPATCH_HOOK_AUDIT_MODE" },
    );
  }
  return "off";
}
