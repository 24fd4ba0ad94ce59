import type { AuditEvent, Origin } from "./audit-events.js";
import { type CallSite, formatCallSite } from "./call-site.js";
import type { Class, Impl } from "./dispatcher.js";
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
  readonly table: object;
  readonly adapter: TableAdapter;
  readonly module: string | undefined;
  readonly mechanism: "hook" | "native";
  /** What the table held for an op type before the registry first wrote it. */
  readonly originals: Map<Class, Impl | undefined>;
  readonly handle: TableHandle;
}

/** @internal */
export const noTables: readonly Table[] = Object.freeze([]);

/**
 * One registration, and the handle its caller holds: a single object, so that registering costs
 * one allocation for both.
 */
/** @internal */
export class Registration implements RegistrationHandle {
  state: HandleState = "pending";
  /** The tables it is in now; most registrations reach one table, so an array, shared while empty. */
  tables: readonly Table[] = noTables;
  /** @internal Its `requested` audit event, which knows the call site. */
  requested: RequestedEvent | undefined;
  /** @internal Set when a plugin's registration module made it while its backend loaded. */
  origin: Origin | undefined;
  readonly #onDispose: (registration: Registration) => void;

  constructor(
    readonly id: number,
    readonly backend: string,
    readonly opType: Class,
    /** @internal */ readonly op: string,
    /** @internal */ readonly impl: Impl,
    /** @internal */ readonly override: boolean,
    onDispose: (registration: Registration) => void,
  ) {
    this.#onDispose = onDispose;
  }

  dispose(): void {
    this.#onDispose(this);
  }

  [Symbol.dispose](): void {
    this.#onDispose(this);
  }

  /** @internal */
  inTable(table: Table | undefined): boolean {
    return table !== undefined && this.tables.includes(table);
  }

  /** @internal */
  addTable(table: Table): void {
    // Added in place: a copy per table made N module instances (?v=N) cost N² (bench/RESULTS.md §6).
    if (this.tables === noTables) this.tables = [table];
    else (this.tables as Table[]).push(table);
  }

  /** @internal */
  removeTable(table: Table): boolean {
    if (!this.tables.includes(table)) return false;
    this.tables = this.tables.filter((t) => t !== table);
    return true;
  }
}

/**
 * The `requested` event. A class rather than a literal: registering is the hot path, and the call
 * site is formatted only when someone reads it (formatting a stack costs microseconds).
 */
/** @internal */
export class RequestedEvent {
  readonly kind = "requested" as const;
  seq = 0;
  readonly id: number;
  readonly backend: string;
  readonly op: string;
  readonly origin: Origin | undefined;
  readonly override: boolean;
  #capture: CallSite | undefined;
  #site: string | undefined;

  constructor(registration: Registration, capture: CallSite | undefined) {
    this.id = registration.id;
    this.backend = registration.backend;
    this.op = registration.op;
    this.origin = registration.origin;
    this.override = registration.override;
    this.#capture = capture;
  }

  get site(): string {
    if (this.#site === undefined) {
      this.#site = formatCallSite(this.#capture);
      this.#capture = undefined;
    }
    return this.#site;
  }

  toJSON(): Extract<AuditEvent, { kind: "requested" }> {
    const event = { kind: this.kind, seq: this.seq, id: this.id, backend: this.backend, op: this.op, site: this.site };
    if (this.origin === undefined && !this.override) return event;
    return { ...event, ...(this.origin === undefined ? {} : { origin: this.origin }), ...(this.override ? { override: true } : {}) };
  }
}
