/**
 * The audit events a registry records for every registration: classes that read what their
 * registration knows instead of copying it, since a registry keeps every event it records (and the
 * collector copies each object kept). Each carries `seq` from the start: a property added after an
 * object is made costs it a second object.
 */
import type { AuditEvent, Mechanism, Origin } from "./audit-events.js";
import type { Registration, Table } from "./registration.js";

/** The `requested` event; its call site, the registration's, is formatted (microseconds) only when read. @internal */
export class RequestedEvent {
  seq = 0;
  readonly #registration: Registration;

  constructor(registration: Registration) {
    this.#registration = registration;
  }

  get kind() {
    return "requested" as const;
  }
  get id(): number {
    return this.#registration.id;
  }
  get backend(): string {
    return this.#registration.backend;
  }
  get op(): string {
    return this.#registration.op;
  }
  get origin(): Origin | undefined {
    return this.#registration.origin;
  }
  get override(): boolean {
    return this.#registration.override;
  }

  get site(): string {
    return this.#registration.site;
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
  readonly #registration: Registration;
  readonly table: number;
  readonly module: string | undefined;
  readonly mechanism: Mechanism;

  constructor(registration: Registration, table: Table, mechanism: Mechanism) {
    this.#registration = registration;
    this.table = table.id;
    this.module = table.module;
    this.mechanism = mechanism;
  }

  get kind() {
    return "applied" as const;
  }
  get id(): number {
    return this.#registration.id;
  }
  get backend(): string {
    return this.#registration.backend;
  }
  get op(): string {
    return this.#registration.op;
  }

  toJSON(): Extract<AuditEvent, { kind: "applied" }> {
    const { kind, seq, id, backend, op, table, module, mechanism } = this;
    return { kind, seq, id, backend, op, table, module, mechanism };
  }
}
