/**
 * The front of a dispatchable function: the fast path (fast-call.ts) compiled for it alone, where
 * code generation is allowed. It is the `instanceof` chain a library would write by hand: each
 * declared class tried in turn (`isPrototypeOf`, most specific first), then the implementation for
 * that class called from a call site of its own. Compiled per dispatchable, each test and each call
 * site keeps its own type feedback, so V8 inlines the implementation as it does in a hand-written
 * chain; a function shared by every dispatchable sees all their implementations at one call site,
 * which V8 never inlines. It reads the fast path's state; every call it does not answer (a set
 * with more classes than WIDTH, a class declared exactly, a primitive, a receiver, another
 * argument count, a decision not made yet) goes to the fast path.
 *
 * Where code generation from strings is disallowed (`--disallow-code-generation-from-strings`),
 * `compileFront()` returns undefined and the fast path answers alone.
 */
import type { FastState, Table } from "./fast-call.js";
import { currentKey, type Holder, type ScopeKey } from "./options-scope.js";

type Fn = (...args: unknown[]) => unknown;

/**
 * Classes tried in the compiled chain, for one relevant argument and for two; a set with more takes
 * the fast path. They keep the function's bytecode under V8's inlining limit (460 bytes), so that it
 * is inlined into its callers as a hand-written chain is.
 */
export const WIDTH = [4, 3] as const;

export interface FrontSpec {
  /** Used in the compiled function's source URL, so stack traces name it. */
  readonly name: string;
  /** The default implementation's parameter count: 1 to 3. */
  readonly arity: number;
  /** One or two indices below the arity. */
  readonly indices: readonly number[];
  readonly set: { readonly version: number };
  readonly holder: Holder;
  readonly state: FastState;
  readonly tableFor: (key: ScopeKey | undefined) => Table;
  /** Every call the front does not answer, with its `this` and arguments. */
  readonly next: (this: unknown, ...args: unknown[]) => unknown;
}

let compiled = 0;

/** The chain for one argument: sets `k` to its class index, or -1 when the front cannot tell. */
function chain(v: string, k: string, width: number): string {
  const tests = Array.from({ length: width }, (_, i) => `n > ${i} && t[${i}].isPrototypeOf(${v}) ? ${i}`).join(" : ");
  return `let ${k} = -1;
      if (typeof ${v} === "object" && ${v} !== null && n <= ${width}) {
        ${k} = ${tests} : n;
        if (${k} < n && (s.exact & (1 << ${k})) !== 0) ${k} = -1;
      }`;
}

/** Compiles the front for one dispatchable, or returns undefined where that is not allowed. */
export function compileFront(spec: FrontSpec): Fn | undefined {
  const { arity, indices } = spec;
  const params = ["a", "b", "c"].slice(0, arity).join(", ");
  const [x, y] = indices.map((i) => "abc"[i] as string);
  const width = WIDTH[indices.length - 1] as number;
  const call = `return f(${params});`;
  // One argument: a call site per class index (and one for none), each with feedback of its own.
  const calls =
    y === undefined
      ? `switch (k) {
        ${Array.from({ length: width + 1 }, (_, i) => `case ${i}: { const f = r[${i}]; if (f !== undefined) ${call} break; }`).join("\n        ")}
      }`
      : `const f = r[k * s.width + l];
      if (f !== undefined) ${call}`;
  // The state's tests and tables are read, not copied: the fast path writes them.
  const source = `"use strict";
    return function dispatchable(${params}) {
      const t = s.tests, n = t.length;
      if (arguments.length === ${arity} && s.version === set.version && this === undefined) {
      ${chain(x as string, "k", width)}
      ${y === undefined ? "" : chain(y, "l", width)}
      if (k >= 0${y === undefined ? "" : " && l >= 0"}) {
      let r = s.plain;
      if (holder.live !== 0) {
        const key = currentKey(holder);
        if (key !== undefined) r = key === s.lastKey ? s.last : tableFor(key);
      }
      ${calls}
      }
      }
      return next.apply(this, arguments);
    };
    //# sourceURL=dispatch-hook/dispatchable/${spec.name.replace(/[^\w.$-]/g, "_")}/${++compiled}`;
  let make: (
    s: FastState,
    set: FrontSpec["set"],
    holder: Holder,
    currentKey: (h: Holder) => ScopeKey | undefined,
    tableFor: FrontSpec["tableFor"],
    next: FrontSpec["next"],
  ) => Fn;
  try {
    // currentKey itself, not a closure made per front: one function, whose feedback V8 keeps, can be inlined.
    make = new Function("s", "set", "holder", "currentKey", "tableFor", "next", source) as typeof make;
  } catch {
    return undefined;
  }
  return make(spec.state, spec.set, spec.holder, currentKey, spec.tableFor, spec.next);
}
