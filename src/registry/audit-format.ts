/**
 * The audit report for people: a row per registration (and per entry written outside the registry),
 * what the audit saw, the problems, and a verdict. Works on report data, so the command line prints a
 * report it read from a file with the same code.
 */
import { path, url } from "../builtins.js";
import type { AuditReport, RegistrationRecord } from "./audit-events.js";

/** A path as people read it: relative to the working directory when that is shorter. */
export function shortPath(file: string, cwd: string = process.cwd()): string {
  const rel = path.relative(cwd, file);
  return rel.length < file.length ? rel : file;
}

/** A module URL as people read it: its path (shortPath), and its query. */
export function shortModule(href: string, cwd: string = process.cwd()): string {
  if (!href.startsWith("file:")) return href;
  try {
    return `${shortPath(url.fileURLToPath(href), cwd)}${href.slice(href.search(/[?#]|$/))}`;
  } catch {
    return href;
  }
}

/** Why nothing was checked where registrations were made and each was undone (a test's, restored after it), or undefined. */
export function undoneText(registrations: readonly RegistrationRecord[]): string | undefined {
  const undone = registrations.length > 0 && registrations.every((r) => r.state === "disposed");
  return undone ? "every registration made was undone (disposed) before the audit, so none could be checked" : undefined;
}

/**
 * A report's verdict: "ok" only when something was checked, and never "every registration landed" over
 * one waiting for a backend that never loaded (no problem: a plugin registers for backends the app may not use).
 */
export function verdict(report: AuditReport): string {
  if (!report.ok) return `${report.problems.length} problem(s):`;
  if (report.checked === 0) {
    // A registration waiting for a backend that never loaded is not checked: nothing said whether it would land.
    const wait = waitingText(report.registrations);
    if (wait !== undefined) return `nothing was checked: no registration landed; ${wait}`;
    const what =
      undoneText(report.registrations) ?? report.notes.find((n) => n.startsWith("no registrations")) ?? "no registrations were made";
    return `nothing was checked: ${what}`;
  }
  return okVerdict(report.registrations, "");
}

/** "2 wait for jax, tpu, which never loaded", or undefined when no registration waits. */
export function waitingText(registrations: readonly RegistrationRecord[]): string | undefined {
  const waiting = registrations.filter((r) => r.state === "pending");
  if (waiting.length === 0) return undefined;
  const backends = [...new Set(waiting.map((r) => r.backend))].sort().join(", ");
  return `${waiting.length} ${waiting.length === 1 ? "waits" : "wait"} for ${backends}, which never loaded`;
}

/** The verdict when something was checked and nothing is wrong (a run's too: `where` follows "landed"). */
export function okVerdict(registrations: readonly RegistrationRecord[], where: string): string {
  const wait = waitingText(registrations);
  // Only entries plugins wrote directly, or expectations, were checked: there was no registration to land.
  if (registrations.length === 0) return `ok: every entry checked is in its table${where}`;
  return wait === undefined
    ? `ok: every registration landed${where}`
    : `ok: every registration on a backend that loaded landed${where}; ${wait}`;
}

/** Columns padded to their widest cell, but the last; two spaces between. */
export function formatTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] as number))).join("  ");
  return [line(header), ...rows.map(line)];
}

/**
 * The tables a registration reached, by module: the instances of one module (a test runner's `?v=N`
 * graphs, each a table) as one name with their count, so that a row stays a line.
 */
export function tablesText(tables: ReadonlyArray<{ readonly module: string | undefined; readonly id: number }>): string {
  const byFile = new Map<string, Set<string>>();
  for (const t of tables) {
    const name = t.module === undefined ? `table #${t.id}` : shortModule(t.module);
    const file = t.module === undefined ? name : shortModule(t.module.replace(/[?#].*$/, ""));
    byFile.set(file, (byFile.get(file) ?? new Set()).add(name));
  }
  return [...byFile].map(([file, names]) => (names.size === 1 ? [...names][0] : `${file} (${names.size} instances)`)).join(", ") || "-";
}

/** `verdict` replaces the verdict line (the command line does when the program itself failed). */
export function formatReport(report: AuditReport, options: { readonly verdict?: string } = {}): string {
  const several = report.registrations.some((r) => r.registry !== undefined && r.registry !== "default");
  const header = ["id", ...(several ? ["registry"] : []), "backend", "op", "state", "via", "site", "module"];
  const rows = report.registrations.map((r) => [
    String(r.id),
    ...(several ? [r.registry ?? "default"] : []),
    r.backend,
    r.op,
    r.state,
    [...new Set(r.tables.map((t) => t.mechanism ?? t.outcome))].join(",") || "-",
    r.origin === undefined ? r.site : `${r.site} (${r.origin.plugin})`,
    tablesText(r.tables.map((t) => ({ module: t.module, id: t.table }))),
  ]);
  for (const w of report.outside) {
    rows.push([
      "-",
      ...(several ? ["-"] : []),
      w.backend,
      w.op,
      w.replaced ? "replaced" : "applied",
      "outside",
      `added by ${shortModule(w.module)}, outside the registry (${w.plugin})`,
      shortModule(w.table),
    ]);
  }
  const out = formatTable(header, rows);
  if (rows.length === 0) out.push("(no registrations)");
  for (const plugin of report.plugins) {
    if (plugin.state === "loaded") continue;
    out.push(`plugin ${plugin.plugin}: registration module for ${plugin.backend} ${plugin.state} (${shortModule(plugin.module)})`);
  }
  for (const note of report.notes) out.push(`· ${note}`);
  out.push(options.verdict ?? verdict(report));
  for (const problem of report.problems) out.push(`  [${problem.kind}] ${problem.message}`);
  return out.join("\n");
}
