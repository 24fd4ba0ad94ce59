/**
 * A dispatchable's call path, in three tiers: a chain compiled for it alone (front.ts) and the fast
 * path (fast-call.ts), where one or two of the first three arguments decide; and the general path,
 * here: decisions cached per tuple of prototypes and per scope (one or two in weak caches, more in a
 * trie of them; no cache keeps a class alive or grows without bound). A decision that asked a
 * protocol holds for another value of the same classes only if the protocols answer the same: each
 * call asks them. Any change to the set changes its version, and every tier's decisions go.
 */
import type { Class } from "../registry/dispatcher.js";
import type { BackendSet } from "./backend-set.js";
import { createFast } from "./fast-call.js";
import { compileFront } from "./front.js";
import { type Fn, type Implementation, realImpl } from "./impl-table.js";
import { currentScope, type Scope, type ScopeKey, scopeHolder } from "./options-scope.js";
import { answers, needsCall, type Plan, plan, runCandidates } from "./plan.js";
import { typeOf } from "./type-match.js";
import { WeakCache } from "./weak-cache.js";

/**
 * The cache key of an argument's type: its prototype, or for null and for undefined a key of each
 * one's own (a decision's error names the type), apart from a null-prototype object's (null), which
 * protocols decide on its own.
 */
const NULL: object = Object.freeze(Object.create(null));
const UNDEFINED: object = Object.freeze(Object.create(null));
const keyOf = (value: unknown, proto: object | null): object | null => (value === null ? NULL : value === undefined ? UNDEFINED : proto);

export interface CallerSpec {
  readonly name: string;
  readonly op: Class;
  readonly set: BackendSet;
  readonly defaultImpl: Fn;
  /** The relevant arguments' indices, or undefined when a function picks them. */
  readonly indices: readonly number[] | undefined;
  readonly relevant: (args: unknown[]) => unknown[];
  readonly labelsFor: (count: number) => string[];
}

/** A cached decision, with the implementation to call straight away when nothing per call is needed. */
export interface Entry {
  readonly plan: Plan;
  readonly fast: Fn | undefined;
  /** When the plan asked protocols of its values: the decisions by their answers (see answers()). */
  readonly byAnswers: Map<string, Entry> | undefined;
}

interface Trie {
  entry?: Entry;
  next?: WeakCache<Trie>;
}

interface Cache {
  readonly one: WeakCache<Entry>;
  readonly two: WeakCache<WeakCache<Entry>>;
  /** By argument count, then a trie of prototypes. Counts are bounded: past LENGTHS, it starts over. */
  readonly many: Map<number, Trie>;
}

const LENGTHS = 64;
/** Sets of protocol answers kept per decision; past it, they start over. */
const ANSWERS = 64;
const standIns = new WeakCache<object>();

/**
 * An explicit type (`fn.like(JaxArray)`, a scope's `types`) as one more relevant value: a class as
 * an object whose prototype is the class's (made once per class), anything else as itself.
 */
function standIn(type: unknown): unknown {
  if (typeof type !== "function" || typeof type.prototype !== "object" || type.prototype === null) return type;
  let value = standIns.get(type);
  if (value === undefined) {
    value = Object.create(type.prototype) as object;
    standIns.set(type, value);
  }
  return value;
}

const newCache = (): Cache => ({ one: new WeakCache(), two: new WeakCache(), many: new Map() });

/** The dispatchable's call, its call with explicit types (`like()`) beside the arguments, and its (cached) decisions. */
export function createCaller(spec: CallerSpec) {
  const { set, indices } = spec;
  const holder = scopeHolder();
  let version = -1;
  let plain = newCache();
  let scoped = new WeakCache<Cache>();
  let lastScope: ScopeKey | undefined;
  let lastScoped: Cache = plain;

  const cacheFor = (scope: Scope | undefined): Cache => {
    if (version !== set.version) {
      // The first decision reads package.json declarations, which changes the version: read first.
      set.control(undefined, spec.name);
      version = set.version;
      plain = newCache();
      scoped = new WeakCache();
      lastScope = undefined;
    }
    if (scope === undefined) return plain;
    if (scope.key === lastScope) return lastScoped;
    let cache = scoped.get(scope.key);
    if (cache === undefined) {
      cache = newCache();
      scoped.set(scope.key, cache);
    }
    lastScope = scope.key;
    lastScoped = cache;
    return cache;
  };

  const make = (values: unknown[], protos: (object | null)[], scope: Scope | undefined, extras: number): Entry => {
    const own = values.length - extras;
    const labels = [...spec.labelsFor(own), ...Array.from({ length: extras }, (_, i) => `explicit type ${i + 1}`)];
    const decided = plan(spec.name, spec.op, labels, values, protos, set.control(scope, spec.name));
    const first = decided.candidates[0];
    const impl =
      first === undefined ? (decided.error === undefined ? spec.defaultImpl : undefined) : (realImpl(first.impl) as Implementation);
    const fast = impl === undefined || needsCall(impl as Implementation) ? undefined : (impl as Fn);
    return { plan: decided, fast, byAnswers: decided.asks.length === 0 ? undefined : new Map() };
  };

  /** The decision for these values under an entry made for their classes: itself, or by the protocols' answers. */
  const answered = (e: Entry, values: unknown[], protos: (object | null)[], scope: Scope | undefined, extras: number): Entry => {
    const byAnswers = e.byAnswers;
    if (byAnswers === undefined) return e;
    const key = answers(spec.name, e.plan, values);
    let found = byAnswers.get(key);
    if (found === undefined) {
      found = make(values, protos, scope, extras);
      // A protocol answered otherwise while the plan was made: right for this call, kept for none.
      if (found.plan.answered !== key) return found;
      if (byAnswers.size >= ANSWERS) byAnswers.clear();
      byAnswers.set(key, found);
    }
    return found;
  };

  const entry1 = (scope: Scope | undefined, extras: number, x: unknown, px: object | null): Entry => {
    const cache = cacheFor(scope);
    const kx = keyOf(x, px);
    let e = cache.one.get(kx);
    if (e === undefined) {
      e = make([x], [px], scope, extras);
      cache.one.set(kx, e);
    }
    return e.byAnswers === undefined ? e : answered(e, [x], [px], scope, extras);
  };

  const entry2 = (scope: Scope | undefined, extras: number, x: unknown, px: object | null, y: unknown, py: object | null): Entry => {
    const cache = cacheFor(scope);
    const [kx, ky] = [keyOf(x, px), keyOf(y, py)];
    let inner = cache.two.get(kx);
    if (inner === undefined) {
      inner = new WeakCache();
      cache.two.set(kx, inner);
    }
    let e = inner.get(ky);
    if (e === undefined) {
      e = make([x, y], [px, py], scope, extras);
      inner.set(ky, e);
    }
    return e.byAnswers === undefined ? e : answered(e, [x, y], [px, py], scope, extras);
  };

  /** `extras`: how many of the values are explicit types (the last ones); per dispatchable, fixed by the count. */
  const entry = (values: unknown[], scope: Scope | undefined, extras: number): Entry => {
    if (indices !== undefined && values.length === 1) return entry1(scope, extras, values[0], typeOf(values[0]));
    if (indices !== undefined && values.length === 2)
      return entry2(scope, extras, values[0], typeOf(values[0]), values[1], typeOf(values[1]));
    const protos = values.map(typeOf);
    const many = cacheFor(scope).many;
    const count = values.length + extras * 65536;
    let at = many.get(count);
    if (at === undefined) {
      if (many.size >= LENGTHS) many.clear();
      at = {};
      many.set(count, at);
    }
    for (const [i, proto] of protos.entries()) {
      const key = keyOf(values[i], proto);
      at.next ??= new WeakCache();
      let child = at.next.get(key);
      if (child === undefined) {
        child = {};
        at.next.set(key, child);
      }
      at = child;
    }
    at.entry ??= make(values, protos, scope, extras);
    return answered(at.entry, values, protos, scope, extras);
  };

  /** The scope's explicit types that this set declares (a scope is seen by every set), per scope key. */
  const explicit = new WeakCache<{ version: number; values: unknown[] }>();
  const scopeTypes = (scope: Scope | undefined): readonly unknown[] => {
    if (scope === undefined || scope.types.length === 0) return [];
    const known = explicit.get(scope.key);
    if (known !== undefined && known.version === set.version) return known.values;
    const backends = set.control(undefined).order;
    const values = scope.types.map(standIn).filter((v) => backends.some((b) => b.types.claim(v, typeOf(v)) !== undefined));
    explicit.set(scope.key, { version: set.version, values });
    return values;
  };

  /** The relevant values of a call: its arguments', then the explicit types. */
  const valuesOf = (args: unknown[], scope: Scope | undefined, like?: readonly unknown[]): { values: unknown[]; extras: number } => {
    const own = spec.relevant(args);
    const extra = like === undefined ? scopeTypes(scope) : [...scopeTypes(scope), ...like.map(standIn)];
    return { values: extra.length === 0 ? own : [...own, ...extra], extras: extra.length };
  };

  /** The decision for a call with these arguments in this scope. */
  const entryFor = (args: unknown[], scope: Scope | undefined, like?: readonly unknown[]): Entry => {
    const { values, extras } = valuesOf(args, scope, like);
    return entry(values, scope, extras);
  };

  const invoke = (self: unknown, args: unknown[], like?: readonly unknown[]): unknown => {
    const scope = currentScope(holder);
    const e = entryFor(args, scope, like);
    if (e.fast === undefined || scope?.trace !== undefined)
      return runCandidates(spec, e.plan, self, args, scope, () => valuesOf(args, scope, like).values);
    // The fast path keys the arguments' class facts (a decision a protocol made is not one); a
    // scope's explicit types are part of its key.
    if (fast !== undefined && like === undefined && e.plan.asks.length === 0) fast.remember(args, scope?.key, e.fast);
    return e.fast.apply(self, args);
  };

  // The fast path answers repeated calls when one or two of the first three arguments decide, and
  // in front of it, where code may be generated, a chain compiled for this dispatchable alone.
  const fast =
    indices !== undefined && (indices.length === 1 || indices.length === 2) && indices.every((i) => i < 3)
      ? createFast({
          indices,
          set,
          holder,
          slow: function (this: unknown, ...args: unknown[]) {
            return invoke(this, args);
          },
        })
      : undefined;
  const arity = spec.defaultImpl.length;
  const front =
    fast !== undefined && indices !== undefined && arity >= 1 && arity <= 3 && indices.every((i) => i < arity)
      ? compileFront({ name: spec.name, arity, indices, set, holder, state: fast.state, tableFor: fast.tableFor, next: fast.call })
      : undefined;
  return {
    entryFor,
    valuesOf,
    callLike: (self: unknown, args: unknown[], like: readonly unknown[]) => invoke(self, args, like),
    call:
      front ??
      fast?.call ??
      function (this: unknown, ...args: unknown[]) {
        return invoke(this, args);
      },
  };
}
