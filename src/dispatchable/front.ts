/**
 * The front of a dispatchable function: a function compiled for it alone, which answers a call from
 * the few decisions made last, and hands every other call to the slow path. It is compiled per
 * dispatchable so that V8 keeps type feedback per function, as it does for a hand-written
 * `instanceof` chain; one shared closure would see every dispatchable's classes and go megamorphic.
 *
 * A remembered decision holds the scope key it was made under (undefined outside scopes), each
 * relevant argument's prototype, which is the truth compared, and the value its `constructor` read,
 * which is only a hint: reading a property first gives V8 the object's map, so that
 * `Object.getPrototypeOf` folds to a constant. An object whose `constructor` lies only misses the
 * front and takes the slow path. Objects (not primitives or functions) are answered here.
 *
 * The front calls an implementation without a receiver, which V8 can inline (`.call(this, …)` it
 * would not, and the front's bytecode must stay under V8's inlining limit). So a call with a
 * receiver (`lib.add(x, y)`) is answered here only when the implementation ignores `this` (an
 * arrow or a bound function); otherwise it takes the slow path, which passes `this` on.
 *
 * Where code generation from strings is disallowed (`--disallow-code-generation-from-strings`),
 * `compileFront()` returns undefined and the caller uses its general path.
 */
import { currentKey, type Holder } from "./options-scope.js";

type Fn = (...args: unknown[]) => unknown;

/**
 * Decisions remembered per function, in and out of scopes: four for one relevant argument, three
 * for two, which keeps the front's bytecode under V8's inlining limit (460 bytes).
 */
export const WAYS = 4;
/** A value no relevant argument or scope key is: an empty slot. */
const EMPTY = Object.freeze({ empty: true });

export interface FrontSpec {
  /** Used in the compiled function's source URL, so stack traces name it. */
  readonly name: string;
  /** The default implementation's parameter count: 1 to 3. */
  readonly arity: number;
  /** One or two indices below the arity. */
  readonly indices: readonly number[];
  readonly set: { readonly version: number };
  readonly holder: Holder;
  /** Every call the front does not answer, with its `this` and arguments. */
  readonly slow: (this: unknown, ...args: unknown[]) => unknown;
}

/** What the front reads; the slow path writes it through `remember()` and `forget()`. */
export type Recent = Record<string, unknown> & { version: number };

export interface Front {
  readonly call: Fn;
  readonly recent: Recent;
}

/**
 * The fields of one remembered decision: k the scope key, c/p the first relevant argument's hint
 * and prototype, d/q the second's, f the implementation, t whether it ignores `this`.
 */
const slotFields = (k: number) => [`k${k}`, `c${k}`, `p${k}`, `d${k}`, `q${k}`, `f${k}`, `t${k}`];

/** Each slot's field names, made once: the slow path moves slots on every decision it remembers. */
const SLOTS = Array.from({ length: WAYS }, (_, i) => slotFields(i));

/** Every field of the state, in the order the object literal gives them. */
const FIELDS = ["version", ...SLOTS.flat()];

/** Misses after which a front is refilled only now and then (see remember). */
const THRASH = 32;

/** Drops every remembered decision and notes the version the next ones are made at. */
export function forget(recent: Recent, version: number): void {
  for (const field of FIELDS) recent[field] = EMPTY;
  recent.version = version;
  recent.misses = 0;
}

const thisless = new WeakMap<Function, boolean>();

/** Whether a function never reads the `this` it is called with: an arrow or a bound function. */
export function ignoresThis(fn: Function): boolean {
  let answer = thisless.get(fn);
  if (answer === undefined) {
    const text = Object.hasOwn(fn, "prototype") || fn.name.startsWith("bound ") ? "" : Function.prototype.toString.call(fn);
    answer = fn.name.startsWith("bound ") || /^(?:async\s*)?\(/.test(text) || /^(?:async\s+)?[\w$]+\s*=>/.test(text);
    thisless.set(fn, answer);
  }
  return answer;
}

/**
 * Remembers a decision for these relevant values under a scope key (undefined outside scopes), in
 * the front's first slot. Values that are not objects are not remembered. It counts its calls since
 * the last `forget()`.
 */
export function remember(recent: Recent, values: readonly unknown[], scopeKey: object | undefined, fast: Fn): void {
  // More types taking turns than the front holds would make every miss remember one decision and
  // evict another: past a few dozen misses, only every sixteenth is remembered, so such calls cost
  // the caches' lookup, and a front that settles on a few types again still refills.
  const misses = recent.misses as number;
  recent.misses = misses + 1;
  if (misses >= THRASH && (misses & 15) !== 0) return;
  const hints: unknown[] = [];
  const protos: unknown[] = [];
  for (const v of values) {
    if (typeof v !== "object" || v === null) return;
    hints.push((v as { constructor?: unknown }).constructor);
    protos.push(Object.getPrototypeOf(v));
  }
  // The newest decision goes first, the others move down one, the oldest drops: the front checks
  // slots in order, and a program that moves between phases (outside a scope, inside one) finds
  // its current decision in the first slot.
  const ways = recent.ways as number;
  for (let slot = ways - 1; slot > 0; slot--) {
    const to = SLOTS[slot] as string[];
    const from = SLOTS[slot - 1] as string[];
    for (let i = 0; i < to.length; i++) recent[to[i] as string] = recent[from[i] as string];
  }
  const [k, c, p, d, q, f, t] = SLOTS[0] as [string, string, string, string, string, string, string];
  recent[k] = scopeKey;
  recent[c] = hints[0];
  recent[p] = protos[0];
  recent[d] = values.length > 1 ? hints[1] : EMPTY;
  recent[q] = values.length > 1 ? protos[1] : EMPTY;
  recent[f] = fast;
  recent[t] = ignoresThis(fast);
}

let compiled = 0;

/** Compiles the front for one dispatchable, or returns undefined where that is not allowed. */
export function compileFront(spec: FrontSpec): Front | undefined {
  const { arity, indices, holder } = spec;
  const params = ["a", "b", "c"].slice(0, arity).join(", ");
  const [x, y] = indices.map((i) => "abc"[i] as string);
  const object = (v: string) => `typeof ${v} === "object" && ${v} !== null`;
  const read = (v: string, c: string, p: string) => `const ${c} = ${v}.constructor, ${p} = Object.getPrototypeOf(${v});`;
  const ways = Array.from(
    { length: y === undefined ? WAYS : WAYS - 1 },
    (_, k) =>
      `if (key === r.k${k} && cx === r.c${k} && px === r.p${k}${y === undefined ? "" : ` && cy === r.d${k} && py === r.q${k}`}` +
      ` && (bare || r.t${k})) return r.f${k}(${params});`,
  );
  // The state is an object literal, so that V8 gives it fast properties; the slow path only ever
  // writes fields it already has. The source URL names the function in stack traces and makes
  // each source unique, so no two dispatchables share compiled code and its feedback.
  const source = `"use strict";
    const s = { ways: ${ways.length}, misses: 0, ${FIELDS.map((f) => `${f}: EMPTY`).join(", ")} };
    return { recent: s, call: function dispatchable(${params}) {
      if (arguments.length === ${arity} && s.version === set.version && ${object(x as string)}${y === undefined ? "" : ` && ${object(y)}`}) {
        ${read(x as string, "cx", "px")}${y === undefined ? "" : ` ${read(y, "cy", "py")}`}
        const key = holder.live === 0 ? undefined : currentKey(holder), bare = this === undefined, r = s;
        ${ways.join("\n        ")}
      }
      return slow.apply(this, arguments);
    } };
    //# sourceURL=dispatch-hook/dispatchable/${spec.name.replace(/[^\w.$-]/g, "_")}/${++compiled}`;
  let make: (EMPTY: object, set: FrontSpec["set"], holder: Holder, key: typeof currentKey, slow: FrontSpec["slow"]) => Front;
  try {
    // currentKey itself, not a closure made per front: one function, whose feedback V8 keeps, can be inlined.
    make = new Function("EMPTY", "set", "holder", "currentKey", "slow", source) as typeof make;
  } catch {
    return undefined;
  }
  // Every field starts EMPTY, the version too, which no set's version equals: the first call goes
  // to the slow path, which forgets at the set's version and remembers.
  return make(EMPTY, spec.set, holder, currentKey, spec.slow);
}
