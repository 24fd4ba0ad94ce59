/**
 * `dispatchable(defaultImpl, { name, args, backends })`: a function that chooses a backend on each call
 * by the types of its relevant arguments, else runs the default (reference). Its call path: call-path.ts.
 */
import { DispatchHookError, describe } from "../registry/errors.js";
import { didYouMean, readOptions } from "../registry/options.js";
import type { BackendSet } from "./backend-set.js";
import { createCaller } from "./call-path.js";
import { type AnyFunction, type CallContext, implLabel, realImpl } from "./impl-table.js";
import { checkTypes, currentScope, scopeHolder } from "./options-scope.js";
import { readParameters } from "./parameter-names.js";
import { contextFor, type Skip } from "./plan.js";

/** Which arguments decide: indices, parameter names, or a function returning the values. */
export type RelevantArgs = readonly (number | string)[] | ((...args: never[]) => readonly unknown[]);

export interface DispatchableOptions {
  /** The function's name (default: the default implementation's name). */
  readonly name?: string;
  readonly args: RelevantArgs;
  readonly backends: BackendSet;
}

/** What `resolve()` answers: who would run, and who was passed over. */
export interface Resolution {
  readonly backend: string;
  readonly implementation: string;
  readonly skipped: readonly Skip[];
}

export type Dispatchable<F extends AnyFunction> = F & {
  /** The default implementation: the reference every backend is checked against. */
  readonly reference: F;
  /** The op class that stands for the function in the backends' tables. */
  readonly op: Function;
  readonly backends: BackendSet;
  /** Which backend would run for these arguments, without running it. */
  resolve(...args: Parameters<F>): Resolution;
  /**
   * The function for calls that say which types they are for (NumPy's `like=`): each class (or
   * value) counts as one more relevant argument. For calls with no array argument: `arange.like(JaxArray)(10)`.
   */
  like(...types: readonly unknown[]): F;
};

/** Where a parameter named `arg` stands, or an error that says why no index can be given for it. */
function indexOf(arg: number | string, parameters: { names: string[]; readable: boolean }, fn: string): number {
  const { names, readable } = parameters;
  const refuse = (why: string): never => {
    const shown = typeof arg === "number" ? String(arg) : typeof arg === "string" ? JSON.stringify(arg) : describe(arg);
    throw new DispatchHookError("ERR_DISPATCH_INVALID_OPTION", `dispatchable(${fn}): ${shown} ${why}.`);
  };
  if (typeof arg === "number") return Number.isInteger(arg) && arg >= 0 ? arg : refuse("is not an argument index");
  if (typeof arg !== "string") return refuse("is neither an argument index nor a parameter name");
  const at = names.flatMap((name, i) => (name === arg ? [i] : []));
  if (at.length === 1) return at[0] as number;
  if (at.length > 1) return refuse(`names parameters ${at.join(" and ")} of the default implementation; give the index of the one meant`);
  const hidden = names.flatMap((name, i) => (name === "" ? [i] : []));
  const readableNames = names.filter((name) => name !== "");
  if (!readable || hidden.length > 0) {
    const why = !readable
      ? "no parameter names can be read from it (a native or bound function)"
      : `parameter${hidden.length === 1 ? "" : "s"} ${hidden.join(", ")} ${hidden.length === 1 ? "is" : "are"} destructured, so ${hidden.length === 1 ? "its name" : "their names"} cannot be read`;
    return refuse(
      `is not a parameter name that can be read from the default implementation (${readableNames.join(", ") || "none"}): ${why}; if it is one of them, give its index instead`,
    );
  }
  return refuse(`is not a parameter of the default implementation (${names.join(", ") || "none found"})${didYouMean(arg, readableNames)}`);
}

export { parameterNames } from "./parameter-names.js";

export function dispatchable<F extends AnyFunction>(defaultImpl: F, given: DispatchableOptions): Dispatchable<F> {
  const options = readOptions(
    given,
    { name: "string", args: "any", backends: "object" },
    "dispatchable()",
  ) as unknown as DispatchableOptions;
  if (typeof defaultImpl !== "function") {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_IMPL",
      `dispatchable(): the default implementation must be a function, got ${describe(defaultImpl)}.`,
    );
  }
  const name = options.name ?? defaultImpl.name;
  const set = options.backends;
  if (name === "" || typeof set?.opFor !== "function") {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `dispatchable(): ${name === "" ? "give the function a name (options.name)" : "options.backends must be a set from createBackends()"}.`,
    );
  }
  const op = set.opFor(name);
  const holder = scopeHolder();
  const parameters = readParameters(defaultImpl);
  const params = parameters.names;
  let indices: number[] | undefined;
  let names: string[] = [];
  let described = "the values its args function picks";
  let relevant: (args: unknown[]) => unknown[];
  if (typeof options.args === "function") {
    const pick = options.args as (...args: unknown[]) => readonly unknown[];
    relevant = (args) => {
      const picked: unknown = pick(...args);
      if (Array.isArray(picked)) return [...picked];
      if (typeof picked === "object" && picked !== null && Symbol.iterator in picked) return [...(picked as Iterable<unknown>)];
      throw new DispatchHookError(
        "ERR_DISPATCH_INVALID_OPTION",
        `${name}(): its args function returned ${describe(picked)}, not a list of the values that decide.`,
      );
    };
  } else if (Array.isArray(options.args)) {
    const at = options.args.map((a) => indexOf(a, parameters, name));
    names = at.map((i) => params[i] || String(i));
    // A rest parameter named or given by its index (`(...arrays)`, args: ["arrays"] or [0]) stands for every argument from its place on.
    const rest = parameters.rest === undefined ? -1 : at.indexOf(parameters.rest);
    if (rest < 0) indices = at;
    described = names.map((n, k) => (k === rest ? `...${n}` : n)).join(", ");
    relevant = rest < 0 ? (args) => at.map((i) => args[i]) : (args) => at.flatMap((i, k) => (k === rest ? args.slice(i) : [args[i]]));
  } else {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `dispatchable(${name}): args must be indices, parameter names or a function, got ${describe(options.args)}.`,
    );
  }
  const reference = defaultImpl.name || name;
  const definition = {
    source: Function.prototype.toString.call(defaultImpl),
    args: typeof options.args === "function" ? Function.prototype.toString.call(options.args) : JSON.stringify(options.args),
  };
  set.describeFunction({ name, relevant: described, reference }, definition);
  const labels = names.map((n) => `argument ${n}`);
  const labelsFor = (n: number) => (labels.length === n ? labels : Array.from({ length: n }, (_, i) => `element ${i}`));
  const caller = createCaller({
    name,
    op,
    set,
    defaultImpl: defaultImpl as unknown as (...a: unknown[]) => unknown,
    indices,
    relevant,
    labelsFor,
  });
  const call = caller.call;
  Object.defineProperty(call, "name", { value: name });
  return Object.assign(call, {
    reference: defaultImpl,
    op,
    backends: set,
    resolve(...args: unknown[]): Resolution {
      const scope = currentScope(holder);
      const p = caller.entryFor(args, scope).plan;
      const skipped = [...p.skipped];
      for (const [i, candidate] of p.candidates.entries()) {
        const impl = realImpl(candidate.impl);
        const next = () => {
          throw new DispatchHookError(
            "ERR_DISPATCH_INVALID_OPTION",
            `${name}.resolve(): a shouldRun() of backend ${JSON.stringify(candidate.backend)} called context.next(); only an implementation may defer.`,
          );
        };
        const shouldRun = impl.shouldRun as ((c: CallContext, ...a: unknown[]) => boolean) | undefined;
        if (
          shouldRun === undefined ||
          shouldRun.call(
            impl,
            // The call's relevant values, explicit types included, as a call's context has them.
            contextFor(name, p, i, scope, () => caller.valuesOf(args, scope).values, next),
            ...args,
          )
        )
          return { backend: candidate.backend, implementation: implLabel(candidate.impl), skipped };
        skipped.push({ backend: candidate.backend, reason: "its shouldRun() returned false for this call" });
      }
      if (p.error !== undefined) throw p.error;
      return { backend: "default", implementation: reference, skipped };
    },
    like(...types: unknown[]) {
      checkTypes(types, `${name}.like()`);
      return Object.defineProperty(
        function (this: unknown, ...args: unknown[]) {
          return caller.callLike(this, args, types);
        },
        "name",
        { value: name },
      );
    },
  }) as unknown as Dispatchable<F>;
}
