/// <reference lib="esnext.disposable" preserve="true" />
/** A registration and its handle, and the state of a backend in a registry. */
import { hub } from "../hub.js";
import type { Mechanism, Origin } from "./audit-events.js";
import type { Class, Impl } from "./dispatcher.js";
import { RequestedEvent } from "./registration-events.js";
import type { TableAdapter } from "./table-adapter.js";

/** Like the audit's states; "refused" here means a table already held an implementation it did not replace. */
export type HandleState = "pending" | "applied" | "failed" | "refused" | "disposed" | "superseded";

/** What register() returns. Disposing it undoes the registration wherever it landed. */
export interface RegistrationHandle extends Disposable {
  readonly id: number;
  readonly backend: string;
  readonly opType: Class;
  readonly state: HandleState;
  dispose(): void;
}

/** What provide() returns. Disposing it takes the registry's entries back out of the table. */
export interface TableHandle extends Disposable {
  readonly id: number;
  readonly backend: string;
  dispose(): void;
}

/** A table the registry was given. @internal */
export interface Table {
  readonly id: number;
  readonly backend: string;
  /** Weak: a table user code drops (a module instance, a Map made per test) is collected, and forgotten. */
  readonly ref: WeakRef<object>;
  readonly adapter: TableAdapter;
  readonly module: string | undefined;
  readonly mechanism: "hook" | "native";
  /**
   * Op types the registry has an entry for in this table (what the table held before is kept in the
   * order of entries, table-entries.ts): one kept as itself, several in a set (entered() and enterIn()).
   */
  entered: Class | Set<Class> | undefined;
  /** What the table gave back for an op type right after the registry wrote it, where that was not the implementation itself (a table that wraps it, or cannot say: undefined). */
  landed?: Map<Class, Impl | undefined>;
  /** Made when provide() hands it out: a table a loader announced (one per module instance) never needs one. */
  handle?: TableHandle;
}

/**
 * Whether the registry has an entry for `opType` in `table`. A table most often gets one op type
 * from a registry (a module instance per test file, each with the plugin's one registration), kept
 * without a set: each instance would keep one (152 bytes, bench/RESULTS.md §13). @internal
 */
export function entered(table: Table, opType: Class): boolean {
  const ops = table.entered;
  return ops === opType || (ops instanceof Set && ops.has(opType));
}

/** Notes (`yes`) or forgets that the registry has an entry for `opType` in `table`. @internal */
export function enterIn(table: Table, opType: Class, yes: boolean): void {
  const ops = table.entered;
  if (!yes) {
    if (ops === opType) table.entered = undefined;
    else if (ops instanceof Set) ops.delete(opType);
  } else if (ops === undefined) table.entered = opType;
  else if (ops instanceof Set) ops.add(opType);
  else if (ops !== opType) table.entered = new Set([ops, opType]);
}

/** The thread's registration order, shared by every copy through the hub. */
let order: { next: number } | undefined;
const nextSeq = (): number => {
  order ??= hub().shared("registration order@1", () => ({ next: 0 }));
  return order.next++;
};

const noTables: readonly Table[] = Object.freeze([]);

/** One registration and the handle its caller holds: one object, so that registering costs one allocation. @internal */
export class Registration implements RegistrationHandle {
  state: HandleState = "pending";
  /**
   * The tables it is in now: most reach one, kept without an array (a registry keeps every registration,
   * and the collector copies each object kept); up to 8 in an array, more (module instances) in a set.
   */
  #tables: Table | Table[] | Set<Table> | undefined;
  /** @internal What it is (id, backend, op, origin, override, call site): its `requested` event, which its `applied` events read. */
  readonly requested: RequestedEvent;
  /** @internal Its place in registration order, across the registries and copies of the thread: of two live entries in a table, the newer is written. */
  readonly seq = nextSeq();
  readonly #onDispose: (registration: Registration) => void;

  constructor(
    id: number,
    backend: string,
    readonly opType: Class,
    op: string,
    /** @internal */ readonly impl: Impl,
    override: boolean,
    onDispose: (registration: Registration) => void,
  ) {
    this.requested = new RequestedEvent(id, backend, op, override);
    this.#onDispose = onDispose;
  }

  get id(): number {
    return this.requested.id;
  }
  get backend(): string {
    return this.requested.backend;
  }
  /** @internal */
  get op(): string {
    return this.requested.op;
  }
  /** @internal */
  get override(): boolean {
    return this.requested.override;
  }
  /** @internal Set when a plugin's registration module made it while its backend loaded. */
  get origin(): Origin | undefined {
    return this.requested.origin;
  }

  dispose(): void {
    this.#onDispose(this);
  }

  [Symbol.dispose](): void {
    this.#onDispose(this);
  }

  /** @internal The tables it is in now (a new array: read when the audit is, not when registering). */
  get tables(): readonly Table[] {
    const tables = this.#tables;
    if (tables === undefined) return noTables;
    return Array.isArray(tables) ? tables.slice() : tables instanceof Set ? [...tables] : [tables];
  }

  /** @internal How many tables it is in. */
  get tableCount(): number {
    const tables = this.#tables;
    if (tables === undefined) return 0;
    return Array.isArray(tables) ? tables.length : tables instanceof Set ? tables.size : 1;
  }

  /** @internal */
  inTable(table: Table | undefined): boolean {
    const tables = this.#tables;
    if (table === undefined || tables === undefined) return false;
    if (Array.isArray(tables)) return tables.includes(table);
    return tables instanceof Set ? tables.has(table) : tables === table;
  }

  /** @internal */
  addTable(table: Table): void {
    // Added in place: a copy per table made N module instances (?v=N) cost N² (bench/RESULTS.md §6).
    const tables = this.#tables;
    if (tables === undefined) this.#tables = table;
    else if (tables instanceof Set) tables.add(table);
    else if (!Array.isArray(tables)) this.#tables = [tables, table];
    else if (tables.length < 8) tables.push(table);
    else this.#tables = new Set([...tables, table]);
  }

  /** @internal Takes it out of every table's list (the entries themselves are the caller's to put back); returns them. */
  takeTables(): readonly Table[] {
    const tables = this.tables;
    this.#tables = undefined;
    return tables;
  }

  /** @internal */
  removeTable(table: Table): boolean {
    if (!this.inTable(table)) return false;
    const tables = this.#tables;
    if (tables instanceof Set) tables.delete(table);
    else this.#tables = Array.isArray(tables) ? tables.filter((t) => t !== table) : undefined;
    return true;
  }
}

/**
 * One backend inside a registry: its tables, which registration owns each op type (and who waits
 * behind it), the seal, and the queue of (registration, table) pairs still to apply, drained
 * re-entrancy-safely: a registration made while a table is being filled is applied after the current one.
 */
interface Job {
  readonly registration: Registration;
  readonly table: Table;
  readonly mechanism: Mechanism;
}

/** @internal */
export class BackendState {
  /** Its tables in the order given, and by the object each wraps: a lookup costs the same with a thousand module instances. */
  readonly #tables = new Map<number, Table>();
  readonly #byObject = new WeakMap<object, Table>();
  /** The live registration per op type. */
  readonly owners = new Map<Class, Registration>();
  /** Registrations waiting behind an owner, newest last: they come back when it goes. */
  readonly #waiting = new Map<Class, Registration[]>();
  sealed = false;
  /** Op types named with expect() outside a plugin's registration window, and where. */
  readonly expected = new Map<string, string>();
  adapter: TableAdapter | undefined;
  readonly #queue: Job[] = [];
  #draining = false;

  constructor(readonly name: string) {}

  /** Its tables, in the order given. */
  get tables(): readonly Table[] {
    return [...this.#tables.values()];
  }

  /** The table wrapping `object`, if it has one. */
  table(object: unknown): Table | undefined {
    const table = typeof object === "object" || typeof object === "function" ? this.#byObject.get(object as object) : undefined;
    return table !== undefined && this.#tables.get(table.id) === table ? table : undefined;
  }

  add(table: Table, object: object): void {
    this.#tables.set(table.id, table);
    this.#byObject.set(object, table);
  }

  /** Takes the table out; whether it was there. */
  remove(table: Table): boolean {
    return this.#tables.get(table.id) === table && this.#tables.delete(table.id);
  }

  /** The live registrations, oldest first. */
  live(): Registration[] {
    const live = [...this.owners.values()];
    // The map is in registration order unless an heir or a restored registration came back later.
    for (let i = 1; i < live.length; i++) {
      if ((live[i] as Registration).id < (live[i - 1] as Registration).id) return live.sort((a, b) => a.id - b.id);
    }
    return live;
  }

  /** Puts `registration` behind the owner of its op type; `first` puts it at the back of the line. */
  wait(registration: Registration, first = false): void {
    const line = this.#waiting.get(registration.opType) ?? [];
    if (first) line.unshift(registration);
    else line.push(registration);
    this.#waiting.set(registration.opType, line);
  }

  /** Removes `registration` from the waiting line of its op type. */
  unwait(registration: Registration): void {
    const line = this.#waiting.get(registration.opType);
    const index = line?.indexOf(registration) ?? -1;
    if (index >= 0) line?.splice(index, 1);
  }

  /** The newest registration waiting for `opType`, taken out of the line. */
  heir(opType: Class): Registration | undefined {
    return this.#waiting.get(opType)?.pop();
  }

  enqueue(registration: Registration, table: Table, mechanism: Mechanism): void {
    this.#queue.push({ registration, table, mechanism });
  }

  /** Queues `registration` for every table of the backend. */
  enqueueEverywhere(registration: Registration, mechanism: Mechanism): void {
    for (const table of this.#tables.values()) this.#queue.push({ registration, table, mechanism });
  }

  drain(apply: (registration: Registration, table: Table, mechanism: Mechanism) => void): void {
    if (this.#draining) return;
    this.#draining = true;
    try {
      for (let i = 0; i < this.#queue.length; i++) {
        const { registration, table, mechanism } = this.#queue[i] as Job;
        if (this.owners.get(registration.opType) !== registration || registration.inTable(table)) continue;
        if (this.#tables.get(table.id) !== table) continue;
        apply(registration, table, mechanism);
      }
    } finally {
      this.#queue.length = 0;
      this.#draining = false;
    }
  }
}
