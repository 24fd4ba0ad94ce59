/**
 * What the hub keeps of each table, member and window (hub.ts), and the notice a member is given of a
 * table. Held weakly: a record holds its object through a WeakRef.
 */
import type { HubMember, TableNotice, WindowFact } from "./channel.js";

export interface TableRecord {
  readonly via: "hook" | "native";
  readonly namespace: string;
  readonly backend: string;
  readonly module: string | undefined;
  readonly exportName: string;
  readonly host: Extract<TableNotice, { via: "hook" }>["host"];
  readonly ref: WeakRef<object>; // the module's namespace or exports (hook), or the table (native)
}

export interface MemberRecord {
  readonly ref: WeakRef<HubMember>;
  readonly slots: string[]; // where it listens, to forget it by
}

export interface WindowRecord {
  readonly fact: WindowFact;
  readonly table: WeakRef<object> | undefined;
  live: boolean; // open or awaiting: counted in #live until settled
}

export const slotOf = (namespace: string, backend: string) => `${namespace}\0${backend}`;
/** A call into a member or loader (of any copy): its throw never reaches the module or the registry that caused it. */
export const attempt = (call: () => void): void => {
  try {
    call();
  } catch {}
};

export const memberRecord = Symbol("dispatch-hook hub member");
export const recordOf = (member: HubMember) => (member as { [memberRecord]?: MemberRecord })[memberRecord];

export function notice(record: TableRecord, target: object): TableNotice {
  const { namespace, backend, module } = record;
  return record.via === "hook"
    ? { via: "hook", namespace, backend, module: module ?? "", exports: target, exportName: record.exportName, host: record.host }
    : { via: "native", namespace, backend, module, table: target };
}
