/** The executable-spec loop: every backend's implementation of a dispatchable, run on the inputs given and compared with the reference's. */
import { util } from "../builtins.js";
import { DispatchHookError, describe } from "../registry/errors.js";
import { readOptions } from "../registry/options.js";
import type { Dispatchable } from "./dispatchable.js";
import { type Fn, type Implementation, realImpl } from "./impl-table.js";
import { contextFor } from "./plan.js";
import { typeName } from "./type-match.js";

export interface ReferenceCheckOptions {
  /** Argument lists to run. */
  readonly inputs: ReadonlyArray<readonly unknown[]>;
  /** Converts the arguments into a backend's own types (default: as given). */
  readonly prepare?: (backend: string, args: readonly unknown[]) => readonly unknown[];
  /** Converts a backend's result back for comparison (default: as returned). */
  readonly normalize?: (backend: string, result: unknown) => unknown;
  /** Whether a backend's result agrees with the reference's (default: deep strict equality). */
  readonly equal?: (actual: unknown, expected: unknown) => boolean;
}

export interface Disagreement {
  readonly backend: string;
  readonly inputs: readonly unknown[];
  readonly expected: unknown;
  readonly actual: unknown;
  /** Set when the backend threw (actual is then undefined). */
  readonly error?: unknown;
}

export interface ReferenceReport {
  /** Backend × input pairs compared (inputs a backend's shouldRun() declines are compared as a call would run them: on the reference). */
  readonly checked: number;
  readonly backends: readonly string[];
  readonly disagreements: readonly Disagreement[];
}

/** The options, read once and checked: each refusal has a code, and nothing runs. */
function readInput(fn: unknown, options: unknown): ReferenceCheckOptions {
  const f = fn as Partial<Dispatchable<(...args: never[]) => unknown>>;
  if (typeof fn !== "function" || typeof f.reference !== "function" || typeof f.backends?.backends !== "function") {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `referenceCheck(): the first argument must be a function made with dispatchable(), got ${describe(fn)}.`,
    );
  }
  const where = `referenceCheck(${fn.name})`;
  const kinds = { inputs: "array", prepare: "function", normalize: "function", equal: "function" } as const;
  const read = readOptions(options, kinds, where, ["inputs"]) as unknown as ReferenceCheckOptions;
  const bad = read.inputs.findIndex((args) => !Array.isArray(args));
  if (bad >= 0) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `${where}: "inputs" must list argument lists, got ${describe(read.inputs[bad])} at position ${bad}. Write inputs: [[x], [x, 2]].`,
    );
  }
  return read;
}

export function referenceCheck(fn: Dispatchable<(...args: never[]) => unknown>, given: ReferenceCheckOptions): ReferenceReport {
  const options = readInput(fn, given);
  const reference = fn.reference as unknown as Fn;
  const expected = options.inputs.map((args) => reference(...args));
  const equal = options.equal ?? util().isDeepStrictEqual;
  const disagreements: Disagreement[] = [];
  const backends: string[] = [];
  let checked = 0;
  for (const backend of fn.backends.backends()) {
    const impl = fn.backends.implementation(backend.name, fn.name);
    if (impl === undefined) continue;
    backends.push(backend.name);
    options.inputs.forEach((args, i) => {
      checked++;
      const prepared = options.prepare === undefined ? args : options.prepare(backend.name, args);
      if (!Array.isArray(prepared)) {
        throw new DispatchHookError(
          "ERR_DISPATCH_INVALID_OPTION",
          `referenceCheck(${fn.name}): prepare() must return the argument list for backend ${JSON.stringify(backend.name)}, got ${describe(prepared)}.`,
        );
      }
      try {
        const real = realImpl(impl) as Implementation & Fn;
        let raw: unknown;
        if (real.usesContext === true || real.shouldRun !== undefined) {
          // A context of its own: this backend, nothing after it but the reference, which context.next() runs.
          const only = { candidates: [{ backend: backend.name, impl }], skipped: [], types: prepared.map(typeName), error: undefined };
          const next = (a: unknown[]) => reference(...(a.length === 0 ? prepared : a));
          const context = contextFor(
            fn.name,
            { ...only, asks: [], answered: "", prioritized: new Set() },
            0,
            undefined,
            () => prepared,
            next,
          );
          // Inputs its shouldRun() declines go where a call sends them: to the next backend, here the
          // reference (as a wrapping backend's calls of it do).
          if (real.shouldRun !== undefined && !(real.shouldRun as Fn)(context, ...prepared)) raw = reference(...prepared);
          else raw = real.usesContext === true ? real(context, ...prepared) : real(...prepared);
        } else raw = real(...prepared);
        const actual = options.normalize === undefined ? raw : options.normalize(backend.name, raw);
        if (!equal(actual, expected[i])) disagreements.push({ backend: backend.name, inputs: args, expected: expected[i], actual });
      } catch (error) {
        disagreements.push({ backend: backend.name, inputs: args, expected: expected[i], actual: undefined, error });
      }
    });
  }
  return { checked, backends, disagreements };
}
