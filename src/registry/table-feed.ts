/**
 * A registry's channel subscriptions, and how it is held. From its first registration until
 * dispose() a registry answers the thread's audit, explains dispatch misses and says which table
 * entries it wrote; while it has live
 * registrations it also listens for tables. It is held strongly while it holds anything that has not
 * landed (so a registry nothing else references cannot take pending registrations with it when it
 * is collected), and weakly once everything has settled.
 */
import type { Channel } from "node:diagnostics_channel";
import { channels, sameRealm } from "../channel.js";

export interface FeedHandlers<T> {
  readonly evaluated: (target: T, message: unknown) => void;
  readonly provided: (target: T, message: unknown) => void;
  readonly miss: (target: T, message: unknown) => void;
  readonly collect: (target: T, message: unknown) => void;
  readonly written: (target: T, message: unknown) => void;
}

type Listener = (message: unknown) => void;

export class TableFeed<T extends object> {
  #strong: T | undefined;
  readonly #weak: WeakRef<T>;
  readonly #membership: ReadonlyArray<readonly [Channel, Listener]>;
  readonly #tables: ReadonlyArray<readonly [Channel, Listener]>;
  #member = false;
  #listening = false;

  constructor(target: T, handlers: FeedHandlers<T>) {
    this.#weak = new WeakRef(target);
    const wrap = (channel: Channel, handle: (target: T, message: unknown) => void) => {
      const listener: Listener = (message) => {
        if (!sameRealm(message)) return;
        const current = this.#strong ?? this.#weak.deref();
        if (current === undefined) {
          channel.unsubscribe(listener);
          return;
        }
        // A listener never throws: it runs inside the publishing dispatch module, which must not
        // fail because of a registry. Each handler records its own failures in the audit log.
        try {
          handle(current, message);
        } catch {}
      };
      return [channel, listener] as const;
    };
    this.#membership = [
      wrap(channels.dispatchMiss, handlers.miss),
      wrap(channels.auditCollect, handlers.collect),
      wrap(channels.tableWritten, handlers.written),
    ];
    this.#tables = [wrap(channels.moduleEvaluated, handlers.evaluated), wrap(channels.tableProvided, handlers.provided)];
  }

  /** Starts answering the thread's audit and dispatch misses (idempotent). */
  join(): void {
    if (this.#member) return;
    this.#member = true;
    for (const [channel, listener] of this.#membership) channel.subscribe(listener);
  }

  /** Starts or stops listening for tables. Returns true when it just started. */
  listen(on: boolean): boolean {
    if (on === this.#listening) return false;
    this.#listening = on;
    for (const [channel, listener] of this.#tables) {
      if (on) channel.subscribe(listener);
      else channel.unsubscribe(listener);
    }
    return on;
  }

  /** Strongly while something has not landed; weakly otherwise. */
  hold(strong: boolean): void {
    this.#strong = strong ? this.#weak.deref() : undefined;
  }

  /** Ends every subscription (dispose). */
  leave(): void {
    this.listen(false);
    if (this.#member) for (const [channel, listener] of this.#membership) channel.unsubscribe(listener);
    this.#member = false;
    this.#strong = undefined;
  }
}
