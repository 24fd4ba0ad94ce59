/** A dispatch module that replaced the table it exported: what landed in the first is not in the one it exports now. */
import type { Problem } from "./audit-events.js";
import type { Fold } from "./audit-fold.js";

/** What it reads of a table the thread knows (audit-report.ts's TableFact). */
interface TableNow {
  readonly backend: string;
  readonly module: string | undefined;
  readonly names: ReadonlySet<string> | undefined;
  readonly exported?: boolean;
}

/**
 * Registrations applied to the table a dispatch module exported when it finished loading, where the
 * module exports another table now that does not hold them: code replaced the table (a framework's
 * reset() making a new one) and nothing gave the new one to dispatch-hook. Asked of tables that list their entries.
 */
export function replacedTables(f: Fold, tables: readonly TableNow[]): Problem[] {
  const out: Problem[] = [];
  for (const record of f.records.values()) {
    if (record.state !== "applied" || f.problems.some((p) => p.id === record.id && p.kind === "displaced")) continue;
    for (const { module, outcome } of record.tables) {
      if (outcome !== "applied" || module === undefined) continue;
      const now = tables.find((t) => t.exported === true && t.backend === record.backend && t.module === module);
      if (now?.names === undefined || now.names.has(record.op)) continue;
      out.push({
        kind: "displaced",
        backend: record.backend,
        op: record.op,
        id: record.id,
        message:
          `${record.op} on ${record.backend} (registration #${record.id}) landed in the table ${module} exported when it finished loading, ` +
          `but the module now exports another ${record.backend} table, which does not hold it: code replaced the table, and nothing gave dispatch-hook the new one. ` +
          `Keep one table (empty it rather than replace it), or announce() the new one (announce(${JSON.stringify(record.backend)}, table, { module: import.meta.url })).`,
      });
      break;
    }
  }
  return out;
}
