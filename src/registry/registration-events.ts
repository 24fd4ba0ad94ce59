/**
 * The audit events a registry records for every registration: its `requested` event is what the
 * registration is, and its `applied` events read that instead of copying it (a registry keeps every
 * event, and the collector copies each object kept). Neither holds the registration itself, whose
 * dispose() holds its registry: a log kept after its registry is dropped keeps only facts. Each event
 * carries `seq` from the start: a property added after an object is made costs it a second object.
 */
import type { AuditEvent, Mechanism, Origin } from "./audit-events.js";
import { type CallSite, formatCallSite } from "./call-site.js";

/**
 * A registration's `requested` event, which is also what the registration is (id, backend, op,
 * override, origin, call site): one object that the registration and its `applied` events read,
 * fixed once it is recorded (origin and call site are set just before). Its call site is formatted
 * only when read. @internal
 */
export class RequestedEvent {
  seq = 0;
  origin: Origin | undefined = undefined;
  /** The capture until `site` is first read (formatting costs microseconds), then its text. */
  callSite: CallSite | string | undefined = undefined;

  constructor(
    readonly id: number,
    readonly backend: string,
    readonly op: string,
    readonly override: boolean,
  ) {}

  get kind() {
    return "requested" as const;
  }

  /** Where it was made ("file:line"), or "unknown". */
  get site(): string {
    const site = this.callSite;
    if (typeof site === "string") return site;
    const text = formatCallSite(site);
    this.callSite = text;
    return text;
  }

  toJSON(): Extract<AuditEvent, { kind: "requested" }> {
    const event = { kind: this.kind, seq: this.seq, id: this.id, backend: this.backend, op: this.op, site: this.site };
    const { origin, override } = this;
    if (origin === undefined && !override) return event;
    return { ...event, ...(origin === undefined ? {} : { origin }), ...(override ? { override: true } : {}) };
  }
}

/** The `applied` event: the registration's entry landed in a table (named by its id and module, never held). @internal */
export class AppliedEvent {
  seq = 0;
  readonly #requested: RequestedEvent;

  constructor(
    requested: RequestedEvent,
    readonly table: number,
    readonly module: string | undefined,
    readonly mechanism: Mechanism,
  ) {
    this.#requested = requested;
  }

  get kind() {
    return "applied" as const;
  }
  get id(): number {
    return this.#requested.id;
  }
  get backend(): string {
    return this.#requested.backend;
  }
  get op(): string {
    return this.#requested.op;
  }

  toJSON(): Extract<AuditEvent, { kind: "applied" }> {
    const { kind, seq, id, backend, op, table, module, mechanism } = this;
    return { kind, seq, id, backend, op, table, module, mechanism };
  }
}
