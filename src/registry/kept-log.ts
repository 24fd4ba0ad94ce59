/**
 * What the thread's audit keeps of a registry that recorded a problem or an expectation: its log, not
 * the registry. A member of the hub, held strongly, that answers with the log's events only once the
 * registry is collected (while it lives, the registry answers for itself). A test suite that makes a
 * registry per test, each with an expect(), kept every registry whole (4 KB each) before.
 */
import type { HubMember } from "../channel.js";
import { hub } from "../hub.js";
import { type AuditEvent, toData } from "./audit-events.js";
import { RequestedEvent } from "./registration-events.js";

/** Expectations, and problems the audit must still report after everything else settled: recording one keeps the log. */
export const keptKinds: ReadonlySet<string> = new Set([
  "expected",
  "refused",
  "identity",
  "unseen-table",
  "stuck",
  "rejected",
  "declaration",
]);

class KeptLog implements HubMember {
  readonly namespace: string;
  readonly name: string;
  readonly copy: string;
  readonly kept = true;
  readonly #registry: WeakRef<HubMember>;
  readonly #events: readonly AuditEvent[];

  constructor(registry: HubMember, events: readonly AuditEvent[]) {
    this.namespace = registry.namespace;
    this.name = registry.name;
    this.copy = registry.copy;
    this.#registry = new WeakRef(registry);
    this.#events = events;
  }

  // Tables, misses and writes are the living registry's to answer: a log has none.
  table(): void {}
  miss(): void {}
  wrote(): undefined {
    return undefined;
  }
  events(): readonly unknown[] {
    return this.#registry.deref() === undefined ? this.#events.map(toData) : [];
  }
}

/** Keeps `events` (the log of `registry`, its member) in the thread's audit after the registry is gone; undo with hub().leave(). */
export function keepLog(registry: HubMember, events: readonly AuditEvent[]): HubMember {
  for (const event of events) if (event instanceof RequestedEvent) event.callSite = event.site; // text, not a captured stack
  const kept = new KeptLog(registry, events);
  hub().join(kept);
  hub().hold(kept, true);
  return kept;
}
