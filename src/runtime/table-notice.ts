/**
 * A table that exists in this thread remembers itself: each notice answers table queries for as
 * long as the thread runs, so a registry created later (of any copy) still finds it. There is no
 * module-level list to miss.
 */
import { ask, channels, type TableNotice, type TableQueryMessage } from "../channel.js";

/** Whether a notice already answers for the same module instance, or the same native table. */
function known(notice: TableNotice): boolean {
  return ask<TableQueryMessage>(channels.tableQuery, { version: 1, answers: [] }).answers.some((other) =>
    notice.via === "hook"
      ? other.via === "hook" && other.module === notice.module && other.exportName === notice.exportName
      : other.via === "native" && other.table === notice.table && other.backend === notice.backend,
  );
}

/** Makes a table answer every future table query. Announcing the same table twice is a no-op. */
export function announce(notice: TableNotice): void {
  if (known(notice)) return;
  channels.tableQuery.subscribe((message) => {
    (message as TableQueryMessage).answers.push(notice);
  });
}
