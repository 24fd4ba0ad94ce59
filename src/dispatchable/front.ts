/**
 * The front of a dispatchable function: the fast path (fast-call.ts) compiled for it alone, the
 * `instanceof` chain a library would write by hand (each declared class tried, most specific first,
 * then that class's implementation called from a call site of its own). Compiled per dispatchable,
 * each test and call site keeps its own type feedback, so V8 inlines the implementation; a function
 * shared by every dispatchable sees all their implementations at one call site, which V8 never
 * inlines. It reads the fast path's state; every call it does not answer (more classes than WIDTH, a
 * class declared exactly, a primitive, a receiver, another argument count, no decision yet) goes to
 * the fast path. Where code generation from strings is disallowed, there is no front.
 */
import type { FastState, Table } from "./fast-call.js";
import { currentKey, type Holder, type ScopeKey } from "./options-scope.js";

type Fn = (...args: unknown[]) => unknown;

/** Classes tried in the chain, for one relevant argument and for two: under V8's inlining limit (460 bytes of bytecode). */
export const WIDTH = [4, 3] as const;

export interface FrontSpec {
  /** For the compiled function's source URL, so stack traces name it. */
  readonly name: string;
  /** The default implementation's parameter count (1 to 3), and one or two indices below it. */
  readonly arity: number;
  readonly indices: readonly number[];
  readonly set: { readonly version: number };
  readonly holder: Holder;
  readonly state: FastState;
  readonly tableFor: (key: ScopeKey | undefined) => Table;
  /** Every call the front does not answer. */
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

/** The front for one dispatchable, or undefined where code generation is not allowed. */
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
