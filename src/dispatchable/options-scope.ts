/**
 * Scoped backend options: `backendOptions({ prioritize, disable, trace }, fn)` runs `fn` with the
 * options on an AsyncLocalStorage, so concurrent requests each see their own. Scopes nest: an inner
 * scope's prioritized backends go before the outer's, disabled backends add up, and the innermost
 * trace wins. Every copy of dispatch-hook in a realm shares one storage, found through a channel,
 * and a dispatchable reads it only once some scope was entered.
 */
import { asyncHooks } from "../builtins.js";
import { ask, type BackendScopeMessage, channels, sameRealm } from "../channel.js";
import { checkOptions } from "../registry/options.js";

/** What a dispatchable call records when a scope asks for a trace. */
export interface TraceEntry {
  /** The dispatchable's name. */
  readonly function: string;
  /** The relevant arguments' types. */
  readonly types: readonly string[];
  /** The backend that ran, or "default". */
  readonly ran: string;
  /** Backends tried or passed over before it, and why. */
  readonly skipped: ReadonlyArray<{ readonly backend: string; readonly reason: string }>;
}

export interface BackendOptions {
  /** Backends to try first, in this order; they may be ones that require opt-in. */
  readonly prioritize?: readonly string[];
  /** Backends not to use. */
  readonly disable?: readonly string[];
  /** An array that receives one entry per dispatchable call. */
  readonly trace?: TraceEntry[];
}

/** The merged options of the current scope; its identity keys the dispatch caches. */
export interface Scope {
  readonly prioritize: readonly string[];
  readonly disable: ReadonlySet<string>;
  readonly trace: TraceEntry[] | undefined;
}

type Storage = import("node:async_hooks").AsyncLocalStorage<Scope>;
interface Holder {
  storage: Storage | undefined;
  entered: boolean;
}

let mine: Holder | undefined;

/** The realm's holder: another copy's if it answers, else this copy's, which then answers. */
export function scopeHolder(): Holder {
  if (mine !== undefined) return mine;
  const found = ask<BackendScopeMessage>(channels.backendScope, { version: 1 }).holder as Holder | undefined;
  if (found !== undefined) {
    mine = found;
    return found;
  }
  const holder: Holder = { storage: undefined, entered: false };
  channels.backendScope.subscribe((message) => {
    const m = message as BackendScopeMessage;
    if (sameRealm(m) && m.holder === undefined) m.holder = holder;
  });
  mine = holder;
  return holder;
}

/** The current scope, or undefined outside every scope. */
export function currentScope(holder: Holder): Scope | undefined {
  return holder.entered ? holder.storage?.getStore() : undefined;
}

const kinds = { prioritize: "array", disable: "array", trace: "array" } as const;

/** Runs `fn` with these backend options for everything it calls, synchronously or later. */
export function backendOptions<T>(options: BackendOptions, fn: () => T): T {
  checkOptions(options, kinds, "backendOptions()");
  const holder = scopeHolder();
  if (holder.storage === undefined) holder.storage = new (asyncHooks().AsyncLocalStorage)() as Storage;
  holder.entered = true;
  const outer = holder.storage.getStore();
  const scope: Scope = Object.freeze({
    prioritize: [...(options.prioritize ?? []), ...(outer?.prioritize ?? [])],
    disable: new Set([...(outer?.disable ?? []), ...(options.disable ?? [])]),
    trace: options.trace ?? outer?.trace,
  });
  return holder.storage.run(scope, fn);
}
