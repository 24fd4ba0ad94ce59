/**
 * A table that exists in this thread remembers itself: each notice answers table queries for as
 * long as its module instance is the current one, so a registry created later (of any copy) still finds it. There is no
 * module-level list to miss.
 */
import { ask, channels, sameRealm, type TableNotice, type TableQueryMessage } from "../channel.js";

function sameModule(a: TableNotice, b: TableNotice): boolean {
  return a.via === "hook" && b.via === "hook" && a.module === b.module && a.exportName === b.exportName;
}

function sameTable(a: TableNotice, b: TableNotice): boolean {
  return a.via === "hook"
    ? sameModule(a, b) && b.via === "hook" && a.namespace === b.namespace
    : b.via === "native" && a.table === b.table && a.backend === b.backend;
}

/**
 * Makes a table answer every future table query of its realm. Announcing the same table twice is a
 * no-op. A new instance of a module URL that already announced (a test runner's next test file, or
 * its module registry reset) retires the older one: a dead module graph is neither found nor kept alive.
 */
export function announce(notice: TableNotice): void {
  const asked = ask<TableQueryMessage>(channels.tableQuery, { version: 1, answers: [], everyRealm: [] });
  const older: Array<() => void> = [];
  for (const other of asked.everyRealm ?? []) {
    if (other.realm === globalThis && sameTable(other.notice, notice)) return;
    if (sameModule(other.notice, notice)) older.push(other.retire);
  }
  for (const retire of older) retire();
  const home = globalThis;
  const listener = (message: unknown) => {
    const query = message as TableQueryMessage;
    query.everyRealm?.push({ notice, realm: home, retire });
    if (sameRealm(query)) query.answers.push(notice);
  };
  const retire = () => channels.tableQuery.unsubscribe(listener);
  channels.tableQuery.subscribe(listener);
}
