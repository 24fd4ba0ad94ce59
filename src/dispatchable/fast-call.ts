/**
 * The fast path of a dispatchable whose one or two relevant arguments are among its first three:
 * each argument's class index (Classifier, in type-match.ts) picks the decision the general path
 * made for it, and a hit calls the implementation at once. Like a hand-written `instanceof` chain, a
 * call costs one prototype walk per declared class tried, and no value's class is read or held.
 * Every call it does not answer (a first decision, a protocol asked per value, a veto, a context, a
 * trace, an error, a set with named types) takes the general path, which remembers here what it may.
 */

import { currentKey, type Holder, type ScopeKey } from "./options-scope.js";
import type { Classifier } from "./type-match.js";
import { WeakCache } from "./weak-cache.js";

type Fn = (...args: unknown[]) => unknown;

export interface FastSpec {
  /** One or two, each below 3. */
  readonly indices: readonly number[];
  readonly set: { readonly version: number; classifier(): Classifier | undefined };
  readonly holder: Holder;
  /** Every call the fast path does not answer. */
  readonly slow: (this: unknown, ...args: unknown[]) => unknown;
}

/** Decisions by class index (for two arguments, `first * width + second`). */
export type Table = Array<Fn | undefined>;

/** What the fast path reads; a compiled front (front.ts) reads the same. */
export interface FastState {
  version: number;
  classifier: Classifier | undefined;
  /** The declared classes' prototypes (most specific first), and the exact ones' bits. */
  tests: readonly object[];
  exact: number;
  /** Indices per argument: the classes, none, null. */
  width: number;
  plain: Table;
  scoped: WeakCache<Table>;
  lastKey: ScopeKey | undefined;
  last: Table;
}

/** The fast call, and `remember()`, which files a decision for a call's arguments under a scope key (undefined outside scopes). */
export function createFast(spec: FastSpec) {
  const { set, holder, slow } = spec;
  const [i, j] = spec.indices as [number, number | undefined];
  const s: FastState = {
    version: -1,
    classifier: undefined,
    tests: [],
    exact: 0,
    width: 0,
    plain: [],
    scoped: new WeakCache(),
    lastKey: undefined,
    last: [],
  };

  const tableFor = (key: ScopeKey | undefined): Table => {
    if (key === undefined) return s.plain;
    if (key === s.lastKey) return s.last;
    let table = s.scoped.get(key);
    if (table === undefined) {
      table = [];
      s.scoped.set(key, table);
    }
    s.lastKey = key;
    s.last = table;
    return table;
  };

  /** A class index for what the loops below do not tell: a primitive, or an object of a class declared exactly. */
  const indexOf = (x: unknown): number => (s.classifier as Classifier).index(x);

  const remember = (args: readonly unknown[], scopeKey: ScopeKey | undefined, fn: Fn): void => {
    if (s.version !== set.version) {
      const classifier = set.classifier();
      // A set the classifier cannot index keeps the version stale: every call takes the general path.
      s.version = classifier === undefined ? -1 : set.version;
      s.classifier = classifier;
      s.tests = classifier?.tests ?? [];
      s.exact = classifier?.exact ?? 0;
      s.width = s.tests.length + 2;
      s.plain = [];
      s.scoped = new WeakCache();
      s.lastKey = undefined;
    }
    if (s.classifier === undefined) return;
    tableFor(scopeKey)[j === undefined ? indexOf(args[i]) : indexOf(args[i]) * s.width + indexOf(args[j])] = fn;
  };

  // Two functions, so that each has type feedback of its own: one relevant argument, and two. Each
  // is small enough for V8 to inline into its caller; the loop is the class index of an object
  // (Classifier.index()) written out. `arguments`: its length decides how the implementation is
  // called (rest parameters would allocate on every call), and it is passed on whole otherwise.
  const one = function dispatchable(this: unknown, a: unknown, b: unknown, c: unknown) {
    const x = i === 0 ? a : i === 1 ? b : c;
    if (s.version === set.version) {
      let k = 0;
      if (typeof x === "object" && x !== null) {
        const t = s.tests;
        // biome-ignore lint/suspicious/noPrototypeBuiltins: called on each prototype itself, V8 compiles it to a prototype walk.
        while (k < t.length && !(t[k] as object).isPrototypeOf(x)) k++;
        if ((s.exact & (1 << k)) !== 0) k = indexOf(x);
      } else k = indexOf(x);
      const f = (holder.live === 0 ? s.plain : tableFor(currentKey(holder)))[k];
      if (f !== undefined) {
        // biome-ignore lint/complexity/noArguments: see above.
        const n = arguments.length;
        // biome-ignore lint/complexity/noArguments: see above.
        if (this !== undefined) return f.apply(this, arguments as unknown as unknown[]);
        if (n === 1) return f(a);
        if (n === 2) return f(a, b);
        if (n === 3) return f(a, b, c);
      }
    }
    // biome-ignore lint/complexity/noArguments: see above.
    return slow.apply(this, arguments as unknown as unknown[]);
  };
  const two = function dispatchable(this: unknown, a: unknown, b: unknown, c: unknown) {
    const x = i === 0 ? a : i === 1 ? b : c;
    const y = j === 0 ? a : j === 1 ? b : c;
    if (s.version === set.version) {
      let k = 0;
      let l = 0;
      const t = s.tests;
      if (typeof x === "object" && x !== null) {
        // biome-ignore lint/suspicious/noPrototypeBuiltins: as above.
        while (k < t.length && !(t[k] as object).isPrototypeOf(x)) k++;
        if ((s.exact & (1 << k)) !== 0) k = indexOf(x);
      } else k = indexOf(x);
      if (typeof y === "object" && y !== null) {
        // biome-ignore lint/suspicious/noPrototypeBuiltins: as above.
        while (l < t.length && !(t[l] as object).isPrototypeOf(y)) l++;
        if ((s.exact & (1 << l)) !== 0) l = indexOf(y);
      } else l = indexOf(y);
      const f = (holder.live === 0 ? s.plain : tableFor(currentKey(holder)))[k * s.width + l];
      if (f !== undefined) {
        // biome-ignore lint/complexity/noArguments: see above.
        const n = arguments.length;
        // biome-ignore lint/complexity/noArguments: see above.
        if (this !== undefined) return f.apply(this, arguments as unknown as unknown[]);
        if (n === 2) return f(a, b);
        if (n === 3) return f(a, b, c);
      }
    }
    // biome-ignore lint/complexity/noArguments: see above.
    return slow.apply(this, arguments as unknown as unknown[]);
  };
  const call = j === undefined ? one : two;
  return { call, remember, state: s, tableFor };
}
