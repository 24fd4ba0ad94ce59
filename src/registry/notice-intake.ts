/**
 * A table announced in the thread (a loader's signal, or a framework's native announce()), taken in
 * by a registry: provided to it, unless it was withdrawn with its handle. An export that is not a
 * table the registry can use is recorded as rejected, never thrown into the module that announced it.
 */
import type { TableNotice } from "../channel.js";
import { noticeTable } from "../table-entries.js";
import type { AuditEvent, Unsequenced } from "./audit-events.js";
import type { ProvideMeta } from "./registry-input.js";

export interface Intake {
  readonly withdrawn: WeakSet<object>;
  provide(backend: string, table: unknown, meta: ProvideMeta): unknown;
  record(event: Unsequenced<AuditEvent>): void;
}

const warned = new WeakSet<object>();

export function acceptNotice(notice: TableNotice, intake: Intake): void {
  try {
    const table = noticeTable(notice);
    if (typeof table === "object" && table !== null && intake.withdrawn.has(table)) return;
    intake.provide(notice.backend, table, { via: notice.via, ...(notice.module === undefined ? {} : { module: notice.module }) });
  } catch (error) {
    const what = notice.via === "hook" ? `its export ${JSON.stringify(notice.exportName)}` : "the table it provided";
    const reason = error instanceof Error ? error.message : String(error);
    const message = `${notice.module ?? "a module"} signalled backend ${JSON.stringify(notice.backend)}, but ${what} could not be used: ${reason}`;
    intake.record({ kind: "rejected", backend: String(notice.backend), module: notice.module, message });
    // Said once per table or module instance (every registry that listens rejects it); the app runs on.
    const target = notice.via === "hook" ? notice.exports : notice.table;
    if (typeof target === "object" && target !== null && !warned.has(target)) {
      warned.add(target);
      process.emitWarning(`${message} Registrations for it wait; none is lost.`, { code: "DISPATCH_HOOK_TABLE_REJECTED" });
    }
  }
}
