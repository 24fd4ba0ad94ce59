/**
 * `dispatchable(defaultImpl, { name, args, backends })`: a function that chooses a backend on each call
 * by the types of its relevant arguments, else runs the default (reference). Its call path: call-path.ts.
 */
import { DispatchHookError, describe } from "../registry/errors.js";
import { checkOptions } from "../registry/options.js";
import type { BackendSet } from "./backend-set.js";
import { createCaller } from "./call-path.js";
import { type CallContext, implLabel, realImpl } from "./impl-table.js";
import { checkTypes, currentScope, scopeHolder } from "./options-scope.js";
import { contextFor, type Skip } from "./plan.js";

type AnyFunction = (...args: never[]) => unknown;

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

/** The parameter names of a plain function or arrow, for `args` given by name. */
export function parameterNames(fn: Function): string[] {
  const text = Function.prototype.toString.call(fn);
  const arrow = /^(?:async\s*)?([A-Za-z_$][\w$]*)\s*=>/.exec(text);
  if (arrow !== null) return [arrow[1] as string];
  const names: string[] = [];
  let depth = 0;
  let current = "";
  for (let i = text.indexOf("(") + 1; i > 0 && i < text.length; i++) {
    const c = text[i] as string;
    if (depth === 0 && (c === "," || c === ")")) {
      names.push(/^\s*(?:\.\.\.)?([A-Za-z_$][\w$]*)/.exec(current)?.[1] ?? "");
      if (c === ")") break;
      current = "";
      continue;
    }
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") depth--;
    current += c;
  }
  return names;
}

export function dispatchable<F extends AnyFunction>(defaultImpl: F, options: DispatchableOptions): Dispatchable<F> {
  checkOptions(options, { name: "string", args: "any", backends: "object" }, "dispatchable()");
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
  const params = parameterNames(defaultImpl);
  let indices: number[] | undefined;
  let names: string[] = [];
  let relevant: (args: unknown[]) => unknown[];
  if (typeof options.args === "function") {
    const pick = options.args as (...args: unknown[]) => readonly unknown[];
    relevant = (args) => [...pick(...args)];
  } else if (Array.isArray(options.args)) {
    const at = options.args.map((a) => {
      const index = typeof a === "number" ? a : params.indexOf(a);
      if (!Number.isInteger(index) || index < 0) {
        throw new DispatchHookError(
          "ERR_DISPATCH_INVALID_OPTION",
          `dispatchable(${name}): ${JSON.stringify(a)} is not ${typeof a === "number" ? "an argument index" : `a parameter of the default implementation (${params.join(", ") || "none found"})`}.`,
        );
      }
      return index;
    });
    indices = at;
    names = at.map((i) => params[i] || String(i));
    relevant = (args) => at.map((i) => args[i]);
  } else {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `dispatchable(${name}): args must be indices, parameter names or a function, got ${describe(options.args)}.`,
    );
  }
  const reference = defaultImpl.name || name;
  set.describeFunction({ name, relevant: indices === undefined ? "the values its args function picks" : names.join(", "), reference });
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
            contextFor(name, p, i, scope, () => relevant(args), next),
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
