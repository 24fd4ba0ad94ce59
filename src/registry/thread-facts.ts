/**
 * What the thread knows, read from the hub at the moment of asking: the tables that exist (of every
 * copy of the package), the installed loaders, and the plugins' registration windows. Nothing is
 * cached, so a fact that stopped being true is gone.
 */
import type { HostFacts } from "../channel.js";
import { hub } from "../hub.js";
import { keyName, listEntries, noticeTable } from "../table-entries.js";
import { assertedBackends } from "./asserted-backends.js";
import type { TableFact, ThreadFacts } from "./report-facts.js";

function names(table: unknown): ReadonlySet<string> | undefined {
  const entries = listEntries(table);
  if (entries === undefined) return undefined;
  const out = new Set<string>();
  for (const key of entries.keys()) {
    const name = keyName(key);
    if (name !== undefined) out.add(name);
  }
  return out;
}

/** The thread's facts; `own` adds tables a registry was given directly (they were never announced). */
export function gatherFacts(
  own: ReadonlyArray<{ readonly backend: string; readonly module: string | undefined; readonly table: object }> = [],
): ThreadFacts {
  const seen = new Set<unknown>();
  const tables: TableFact[] = [];
  const add = (backend: string, module: string | undefined, table: unknown, host?: HostFacts) => {
    if (typeof table !== "object" || table === null || seen.has(table)) return;
    seen.add(table);
    tables.push({ backend, module, names: names(table), host });
  };
  const h = hub();
  for (const notice of h.allTables())
    add(notice.backend, notice.module, noticeTable(notice), notice.via === "hook" ? notice.host : undefined);
  for (const t of own) add(t.backend, t.module, t.table);
  return { tables, loaders: h.loaders(), windows: h.windows(), refusals: h.refusals(), asserted: assertedBackends() };
}
