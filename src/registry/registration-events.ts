/**
 * What a registration is, and the audit events a registry records for each: the events read the
 * registration's facts instead of copying them (a registry keeps every event, and the collector
 * copies each object kept), and never hold the registration itself, whose dispose() holds its
 * registry: a log kept after its registry is dropped keeps only facts. Each event carries `seq` from
 * the start: a property added after an object is made costs it a second object.
 */
import type { AuditEvent, Mechanism, Origin } from "./audit-events.js";
import { type CallSite, formatCallSite } from "./call-site.js";

/** A registration's facts, fixed once it is recorded (origin and call site are set just before). @internal */
export class RegistrationFacts {
  origin: Origin | undefined = undefined;
  /** The capture until `site` is first read (formatting costs microseconds), then its text. */
  callSite: CallSite | string | undefined = undefined;

  constructor(
    readonly id: number,
    readonly backend: string,
    readonly op: string,
    readonly override: boolean,
  ) {}

  /** Where it was made ("file:line"), or "unknown". */
  get site(): string {
    const site = this.callSite;
    if (typeof site === "string") return site;
    const text = formatCallSite(site);
    this.callSite = text;
    return text;
  }
}

/** What both events read of their registration's facts. */
abstract class RegistrationEvent {
  seq = 0;
  readonly #facts: RegistrationFacts;

  constructor(facts: RegistrationFacts) {
    this.#facts = facts;
  }

  protected get facts(): RegistrationFacts {
    return this.#facts;
  }
  get id(): number {
    return this.#facts.id;
  }
  get backend(): string {
    return this.#facts.backend;
  }
  get op(): string {
    return this.#facts.op;
  }
}

/** The `requested` event; its call site is formatted only when read. @internal */
export class RequestedEvent extends RegistrationEvent {
  get kind() {
    return "requested" as const;
  }
  get origin(): Origin | undefined {
    return this.facts.origin;
  }
  get override(): boolean {
    return this.facts.override;
  }
  get site(): string {
    return this.facts.site;
  }

  toJSON(): Extract<AuditEvent, { kind: "requested" }> {
    const event = { kind: this.kind, seq: this.seq, id: this.id, backend: this.backend, op: this.op, site: this.site };
    const { origin, override } = this;
    if (origin === undefined && !override) return event;
    return { ...event, ...(origin === undefined ? {} : { origin }), ...(override ? { override: true } : {}) };
  }
}

/** The `applied` event: the registration's entry landed in a table (named by its id and module, never held). @internal */
export class AppliedEvent extends RegistrationEvent {
  constructor(
    facts: RegistrationFacts,
    readonly table: number,
    readonly module: string | undefined,
    readonly mechanism: Mechanism,
  ) {
    super(facts);
  }

  get kind() {
    return "applied" as const;
  }

  toJSON(): Extract<AuditEvent, { kind: "applied" }> {
    const { kind, seq, id, backend, op, table, module, mechanism } = this;
    return { kind, seq, id, backend, op, table, module, mechanism };
  }
}
