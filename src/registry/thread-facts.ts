/**
 * What the thread knows, asked through the channels at the moment of asking: the tables that exist
 * (of every copy of the package), the installed loaders, and the plugins' registration windows.
 * Nothing is cached, so a fact that stopped being true (a module that has since signalled) is gone.
 */
import {
  ask,
  channels,
  type HostFacts,
  type LoaderStatusMessage,
  type TableNotice,
  type TableQueryMessage,
  type WindowCurrentMessage,
  type WindowInfo,
  type WindowQueryMessage,
} from "../channel.js";
import { keyName, listEntries, noticeTable } from "../table-entries.js";
import type { TableFact, ThreadFacts } from "./audit-report.js";

export function tableNotices(): TableNotice[] {
  return ask<TableQueryMessage>(channels.tableQuery, { version: 1, answers: [] }).answers;
}

export function loaderStatus(): LoaderStatusMessage {
  return ask<LoaderStatusMessage>(channels.loaderStatus, { version: 1, installations: [] });
}

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
  for (const notice of tableNotices())
    add(notice.backend, notice.module, noticeTable(notice), notice.via === "hook" ? notice.host : undefined);
  for (const t of own) add(t.backend, t.module, t.table);
  return {
    tables,
    loaders: loaderStatus().installations,
    windows: ask<WindowQueryMessage>(channels.windowQuery, { version: 1, windows: [] }).windows,
  };
}

/** The innermost registration window open now, if any: a registration made now is its plugin's. */
export function currentWindow(): WindowInfo | undefined {
  if (!channels.windowCurrent.hasSubscribers) return undefined;
  return ask<WindowCurrentMessage>(channels.windowCurrent, { version: 1, open: [] }).open.at(-1);
}
