/**
 * `backendOptions({ prioritize, disable, trace, types }, fn)` runs `fn` with the options on an
 * AsyncLocalStorage, so concurrent requests each see their own. Scopes nest: an inner scope's
 * prioritized backends go first, disabled backends and explicit types add up, the innermost trace
 * wins. Every copy of dispatch-hook in a realm shares one storage (through the hub).
 */
import { asyncHooks, contextFrames } from "../builtins.js";
import { hub } from "../hub.js";
import { DispatchHookError, describe } from "../registry/errors.js";
import { readOptions } from "../registry/options.js";

/** What a dispatchable call records when a scope asks for a trace. */
export interface TraceEntry {
  readonly function: string;
  /** The relevant arguments' types. */
  readonly types: readonly string[];
  /** The backend that ran, or "default". */
  readonly ran: string;
  /** When the backend that ran wraps another: the one whose implementation ran on converted arguments. */
  readonly wraps?: string;
  /** Every backend passed over for this call, before or after the one that ran (blocked, not opted in, not taking these types, deferring), and why. */
  readonly skipped: ReadonlyArray<{ readonly backend: string; readonly reason: string }>;
}

export interface BackendOptions {
  /** Backends to try first, in this order; they may be ones that require opt-in. */
  readonly prioritize?: readonly string[];
  readonly disable?: readonly string[];
  /** An array that receives one entry per dispatchable call. */
  readonly trace?: TraceEntry[];
  /** Types every call treats as more arguments (spatch's `type=`): classes, or values. A set that declares none of them ignores them. */
  readonly types?: readonly unknown[];
}

/**
 * What a scope's decisions depend on. Scopes with equal options share one key, and the decisions
 * cached under it (a handler that enters `backendOptions()` per request decides once). A traced
 * scope's key is never answered without running the trace.
 */
export interface ScopeKey {
  readonly prioritize: readonly string[];
  readonly disable: ReadonlySet<string>;
  readonly traced: boolean;
  readonly types: readonly unknown[];
}

/** The merged options of the current scope. */
export interface Scope {
  readonly key: ScopeKey;
  readonly prioritize: readonly string[];
  readonly disable: ReadonlySet<string>;
  readonly trace: TraceEntry[] | undefined;
  readonly types: readonly unknown[];
}

/** Interned keys; past the cap, a scope gets a key of its own (correct, only not shared). */
const keys = new Map<string, ScopeKey>();
const KEY_CAP = 1024;

/** A number per explicit type, so that a key's text can name it; held weakly. */
const typeIds = new WeakMap<object, number>();
let lastTypeId = 0;
const idOf = (type: unknown): unknown => {
  if ((typeof type !== "object" && typeof type !== "function") || type === null) return [typeof type, type];
  let id = typeIds.get(type);
  if (id === undefined) {
    id = ++lastTypeId;
    typeIds.set(type, id);
  }
  return id;
};

function keyFor(prioritize: readonly string[], disable: ReadonlySet<string>, traced: boolean, types: readonly unknown[]): ScopeKey {
  const text = JSON.stringify([prioritize, [...disable].sort(), traced, types.map(idOf)]);
  let key = keys.get(text);
  if (key === undefined) {
    key = Object.freeze({ prioritize, disable, traced, types });
    if (keys.size < KEY_CAP) keys.set(text, key);
  }
  return key;
}

/** What the scopes use of Node's AsyncLocalStorage: written out, so that the published types need no @types/node. */
interface Storage {
  getStore(): Scope | undefined;
  run<R>(store: Scope, fn: () => R): R;
}

/**
 * Where the realm's scopes live. The holder also keeps the innermost `backendOptions()` scope whose
 * callback is on the stack, with the execution async id it was entered in: while that id holds, the
 * code running is the callback's synchronous part, and the scope is read without asking the storage
 * (which costs several times a dispatch on Node 24). An AsyncResource or a bound function changes
 * the id, and the storage is asked, as for every continuation after the callback returned.
 *
 * Where the storage keeps its store on each async resource (Node 20 and 22, not Node 24's context
 * frames), an execution async id names one store until `backendOptions()` changes a store (counted
 * by `epoch`): the key last read is kept with its id and epoch, and read again once per continuation.
 */
export interface Holder {
  storage: Storage | undefined;
  /** Scope objects not yet collected. At 0 no code can be in a scope (what runs in one holds it): the storage is not asked. */
  live: number;
  sync: Scope | undefined;
  depth: number;
  syncId: number;
  readonly asyncId: () => number;
  /** Whether the storage keeps a store per async resource, so that a key may be kept per id. */
  byId: boolean;
  epoch: number;
  keyId: number;
  keyEpoch: number;
  key: ScopeKey | undefined;
}

let mine: Holder | undefined;
const collected = new FinalizationRegistry<Holder>((holder) => {
  holder.live--;
});

/**
 * Untraced scopes with equal options inside the same outer scope are one object, while it lives: a
 * loop that enters a scope per item adds no finalization record per call (those are freed only once
 * the event loop turns, so a long synchronous loop would grow without bound).
 */
const made = new WeakMap<object, Map<ScopeKey, WeakRef<Scope>>>();
const outermost = {};

/** The realm's holder, shared by every copy through the hub ("@2": the holder's shape, see Holder). */
export function scopeHolder(): Holder {
  if (mine !== undefined) return mine;
  mine = hub().shared<Holder>("backend-scope@2", () => ({
    storage: undefined,
    live: 0,
    sync: undefined,
    depth: 0,
    syncId: -1,
    asyncId: asyncHooks().executionAsyncId,
    byId: false,
    epoch: 0,
    keyId: -1,
    keyEpoch: -1,
    key: undefined,
  }));
  return mine;
}

/** The current scope, or undefined outside every scope. */
export function currentScope(holder: Holder): Scope | undefined {
  if (holder.live === 0) return undefined;
  return holder.depth > 0 && holder.asyncId() === holder.syncId ? holder.sync : holder.storage?.getStore();
}

/** The current scope's key, or undefined outside every scope: what a dispatchable's front asks. */
export function currentKey(holder: Holder): ScopeKey | undefined {
  const id = holder.asyncId();
  if (holder.depth > 0 && id === holder.syncId) return holder.sync?.key;
  if (holder.live === 0) return undefined;
  if (!holder.byId) return holder.storage?.getStore()?.key;
  if (id !== holder.keyId || holder.epoch !== holder.keyEpoch) {
    holder.key = holder.storage?.getStore()?.key;
    holder.keyId = id;
    holder.keyEpoch = holder.epoch;
  }
  return holder.key;
}

/** Refuses explicit types (a scope's, or `like()`'s) that cannot stand for an argument: undefined, null. */
export function checkTypes(types: readonly unknown[] | undefined, where: string): void {
  const bad = types?.findIndex((t) => t === undefined || t === null) ?? -1;
  if (bad >= 0) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `${where}: types must be classes or values, got ${describe(types?.[bad])} at position ${bad}. To fix: pass the class (JaxArray) or an array of it.`,
    );
  }
}

const kinds = { prioritize: "names", disable: "names", trace: "array", types: "array" } as const;

/** The options, read once and checked, before any scope is entered. */
function readScopeOptions(options: BackendOptions, fn: unknown): BackendOptions {
  const read: BackendOptions = readOptions(options, kinds, "backendOptions()");
  if (typeof fn !== "function") {
    throw new DispatchHookError("ERR_DISPATCH_INVALID_OPTION", `backendOptions(): the callback must be a function, got ${describe(fn)}.`);
  }
  const trace = read.trace;
  // Every call pushes one entry: an array that cannot grow would fail each call, after its work was done.
  if (trace !== undefined && (!Object.isExtensible(trace) || Object.getOwnPropertyDescriptor(trace, "length")?.writable === false)) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      'backendOptions(): "trace" must be an array it can add entries to, got one that is frozen, sealed or of fixed length.',
    );
  }
  checkTypes(read.types, "backendOptions()");
  return read;
}

/** Runs `fn` with these backend options for everything it calls, synchronously or later. */
export function backendOptions<T>(given: BackendOptions, fn: () => T): T {
  const options = readScopeOptions(given, fn);
  const holder = scopeHolder();
  if (holder.storage === undefined) {
    holder.storage = new (asyncHooks().AsyncLocalStorage)() as Storage;
    holder.byId = !contextFrames();
  }
  const outer = currentScope(holder);
  const prioritize = [...(options.prioritize ?? []), ...(outer?.prioritize ?? [])];
  const disable = new Set([...(outer?.disable ?? []), ...(options.disable ?? [])]);
  const trace = options.trace ?? outer?.trace;
  const types = [...(outer?.types ?? []), ...(options.types ?? [])];
  const key = keyFor(prioritize, disable, trace !== undefined, types);
  const siblings = trace === undefined ? (made.get(outer ?? outermost) ?? new Map<ScopeKey, WeakRef<Scope>>()) : undefined;
  let scope = siblings?.get(key)?.deref();
  if (scope === undefined) {
    scope = Object.freeze({ key, prioritize, disable, trace, types });
    holder.live++;
    collected.register(scope, holder);
    if (siblings !== undefined) {
      // Past the cap, it starts over: a key whose scope was collected never blocks a new one.
      if (siblings.size >= KEY_CAP) siblings.clear();
      siblings.set(key, new WeakRef(scope));
      made.set(outer ?? outermost, siblings);
    }
  }
  const { sync, depth, syncId } = holder;
  holder.sync = scope;
  holder.depth = depth + 1;
  holder.syncId = holder.asyncId();
  holder.epoch++;
  try {
    return holder.storage.run(scope, fn);
  } finally {
    holder.sync = sync;
    holder.depth = depth;
    holder.syncId = syncId;
    holder.epoch++;
  }
}
