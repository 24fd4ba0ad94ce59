/**
 * A registry's audit log: the life of every registration, as events. Read-only: events come from its
 * registry, never from outside, so a report cannot be forged into saying "ok".
 */
import type { AuditEvent, Unsequenced } from "./audit-events.js";
import { DispatchHookError } from "./errors.js";

const token = Symbol("AuditLog");

export function toData(event: AuditEvent): AuditEvent {
  const json = (event as { toJSON?: () => AuditEvent }).toJSON;
  return typeof json === "function" ? json.call(event) : { ...event };
}

export class AuditLog {
  readonly #events: AuditEvent[];

  /** @internal A registry creates its log with createAuditLog(); the log cannot be written from outside. */
  constructor(key: symbol, events: AuditEvent[]) {
    if (key !== token) {
      throw new DispatchHookError(
        "ERR_DISPATCH_INVALID_OPTION",
        "An AuditLog belongs to a registry and cannot be created on its own: read one through registry.audit.",
      );
    }
    this.#events = events;
  }

  get size(): number {
    return this.#events.length;
  }

  /** The events so far, oldest first, as plain data: a snapshot, read-only. */
  events(): AuditEvent[] {
    return frozen(this.#events.map(toData));
  }

  /** The events as data, so that `JSON.stringify({ audit })` nests them. */
  toJSON(): AuditEvent[] {
    return this.events();
  }

  /** The events as JSON Lines: one event per line. */
  toJSONLines(): string {
    return this.#events.map((event) => JSON.stringify(event)).join("\n");
  }
}

/** A report, and everything in it, made read-only: what user code gets is a snapshot it cannot change. */
export function frozen<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) frozen((value as Record<string, unknown>)[key]);
  }
  return value;
}

/** The log (frozen: none of its methods can be replaced on it), its events, and its only writer. @internal */
export function createAuditLog(): { log: AuditLog; events: AuditEvent[]; record: (event: Unsequenced<AuditEvent>) => void } {
  const events: AuditEvent[] = [];
  const log = new AuditLog(token, events);
  Object.freeze(log);
  const record = (event: Unsequenced<AuditEvent>) => {
    (event as { seq: number }).seq = events.length;
    events.push(event as AuditEvent);
  };
  return { log, events, record };
}
