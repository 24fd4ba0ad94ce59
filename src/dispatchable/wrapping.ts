/**
 * A backend that wraps another (`wraps: { backend: "jax", convert, restore }`): for every function the
 * other implements and this one does not, it converts each argument into the other's types (or
 * leaves it), runs the other's implementation, and converts the result back. The wrapped
 * implementation's own `shouldRun` is asked with the converted arguments (`false` defers to the next
 * backend). The trace names the wrapped backend (`wraps`).
 */
import type { Class } from "../registry/dispatcher.js";
import { DispatchHookError, describe } from "../registry/errors.js";
import {
  asImplementation,
  type CallContext,
  contextDeclined,
  contextValues,
  type Fn,
  type Implementation,
  nearName,
  type OwnContext,
  realImpl,
} from "./impl-table.js";
import { classesOf, typeName } from "./type-match.js";

export interface Wraps {
  /** The backend whose implementations run. */
  readonly backend: string;
  /** Converts one argument into the wrapped backend's types (or returns it unchanged). A `"specifier#export"` loads on first use. */
  readonly convert: ((value: unknown, context: CallContext) => unknown) | string;
  /** Converts the wrapped implementation's result back. A `"specifier#export"` loads on first use. */
  readonly restore: ((result: unknown, context: CallContext) => unknown) | string;
}

/** Wrappers, and the backend each one wraps: for the trace. */
export const wrappedBackends = new WeakMap<Function, string>();
/** The implementation a wrapper runs: itself a wrapper where a backend wraps one that wraps another. */
export const wrappedImplementations = new WeakMap<Function, Implementation>();

/**
 * What to say of a backend that wraps one the set does not declare, once the set knows its backends
 * (its first decision): it has nothing to run, and its calls would quietly go elsewhere.
 */
export function unknownWrapped(set: string, backends: ReadonlyMap<string, { readonly wraps?: string | undefined }>): DispatchHookError[] {
  const errors: DispatchHookError[] = [];
  for (const [backend, { wraps }] of backends) {
    if (wraps === undefined || backends.has(wraps)) continue;
    const near = nearName(
      wraps,
      [...backends.keys()].filter((name) => name !== backend),
    );
    errors.push(
      new DispatchHookError(
        "ERR_DISPATCH_BACKEND_DECLARATION",
        `Backend ${JSON.stringify(backend)} of ${set} wraps ${JSON.stringify(wraps)}, which the set does not declare${near === undefined ? "" : ` (did you mean ${JSON.stringify(near)}?)`}. ` +
          `Its backends: ${[...backends.keys()].join(", ")}. Until then its calls go to the next backend. To fix: name a declared backend in wraps.backend, or declare ${JSON.stringify(wraps)}.`,
        { details: { set, backend, wraps, ...(near === undefined ? {} : { near }) } },
      ),
    );
  }
  return errors;
}

/** Checks a declaration's `wraps` where it enters; `convert` and `restore` as functions. */
export function checkWraps(
  value: unknown,
  backend: string,
  where: string,
  base: string,
  eager: boolean,
): { backend: string; convert: Implementation; restore: Implementation } {
  const w = value as Partial<Wraps> | null;
  const fail = (why: string) =>
    new DispatchHookError(
      "ERR_DISPATCH_BACKEND_DECLARATION",
      `${where}: wraps ${why}. Write wraps: { backend: "jax", convert: (value, context) => …, restore: (result, context) => … }.`,
    );
  if (typeof w !== "object" || w === null) throw fail(`must be an object, got ${describe(value)}`);
  const extra = Object.keys(w).filter((k) => !["backend", "convert", "restore"].includes(k));
  if (extra.length > 0) throw fail(`has unknown keys ${extra.map((k) => JSON.stringify(k)).join(", ")}`);
  if (typeof w.backend !== "string" || w.backend === "") throw fail(`.backend must name a backend, got ${describe(w.backend)}`);
  if (w.backend === backend) throw fail("names the backend itself");
  const fn = (key: "convert" | "restore"): Implementation => {
    const f = asImplementation(w[key], base, backend, `wraps.${key}`, eager);
    if (f === undefined) throw fail(`.${key} must be a function or "specifier#export", got ${describe(w[key])}`);
    return f;
  };
  return { backend: w.backend, convert: fn("convert"), restore: fn("restore") };
}

/**
 * The context the wrapped implementation sees: its own backend, and the types and classes of the
 * converted values (what it is given, and what it builds results of), read only if asked for. Its
 * next() passes the call on with the caller's own arguments (none given) or those given.
 */
function innerContext(
  outer: CallContext,
  backend: string,
  args: readonly unknown[],
  converted: readonly unknown[],
  into: (value: unknown, index: number | undefined) => unknown,
  next: (...args: unknown[]) => unknown,
): OwnContext {
  let values: unknown[] | undefined;
  let types: string[] | undefined;
  let classes: CallContext["classes"] | undefined;
  const relevant = (outer as Partial<OwnContext>)[contextValues];
  // A relevant value is an argument (converted already) or an explicit type's stand-in (converted here).
  const innerValues = (): unknown[] => {
    values ??= (relevant?.() ?? []).map((v) => {
      const i = args.indexOf(v);
      return i >= 0 ? converted[i] : into(v, undefined);
    });
    return values;
  };
  return {
    function: outer.function,
    backend,
    get types() {
      types ??= innerValues().map(typeName);
      return types;
    },
    get classes() {
      classes ??= classesOf(innerValues());
      return classes;
    },
    remaining: outer.remaining,
    options: outer.options,
    prioritized: outer.prioritized,
    next,
    [contextValues]: innerValues,
    [contextDeclined]: (outer as Partial<OwnContext>)[contextDeclined] ?? (() => next()),
  };
}

/**
 * The implementations a wrapping backend gets from the one it wraps: `inner(op)` is the wrapped
 * backend's current implementation. Wrappers are made once per implementation they wrap.
 */
export function wrappingImplementations(
  wraps: { backend: string; convert: Implementation; restore: Implementation },
  backend: string,
  inner: (op: Class) => Implementation | undefined,
): (op: Class) => Implementation | undefined {
  const made = new Map<Class, { inner: Implementation; wrapper: Implementation }>();
  return (op) => {
    const impl = inner(op);
    if (impl === undefined) return undefined;
    const known = made.get(op);
    if (known?.inner === impl) return known.wrapper;
    const fn = op.name;
    const fail = (phase: "convert" | "restore", error: unknown, at: { index?: number; result?: unknown }) =>
      new DispatchHookError(
        "ERR_DISPATCH_CONVERT",
        `Backend ${JSON.stringify(backend)} wraps ${JSON.stringify(wraps.backend)}, but ${
          phase === "convert"
            ? `converting ${at.index === undefined ? "an explicit type (like(), a scope's types)" : `argument ${at.index}`} of ${fn}() into ${wraps.backend}'s types failed`
            : `restore could not convert back what ${wraps.backend}'s ${fn}() returned (${describe(at.result)})`
        }: ${error instanceof Error ? error.message : String(error)}. To fix: make convert and restore handle this value, or give ${backend} an implementation of ${fn} of its own.`,
        {
          cause: error,
          details: { backend, wraps: wraps.backend, function: fn, phase, ...(at.index === undefined ? {} : { argument: at.index }) },
        },
      );
    // Both loaded before anything runs: a lazy one that cannot load is the called function's error, not the implementation's after it ran.
    const load = (phase: "convert" | "restore"): Fn => {
      try {
        return realImpl(wraps[phase]) as Fn;
      } catch (error) {
        if (!(error instanceof DispatchHookError)) throw error;
        const message = `Backend ${JSON.stringify(backend)} wraps ${JSON.stringify(wraps.backend)}, but its ${phase} for ${fn}() could not be loaded: ${error.message}`;
        throw new DispatchHookError(error.code, message, { cause: error, details: { backend, wraps: wraps.backend, function: fn, phase } });
      }
    };
    const wrapper = function (this: unknown, context: CallContext, ...args: unknown[]) {
      const convert = load("convert");
      const restore = load("restore");
      const into = (value: unknown, index: number | undefined): unknown => {
        try {
          return convert(value, context);
        } catch (error) {
          throw fail("convert", error, index === undefined ? {} : { index });
        }
      };
      const converted = args.map((a, i) => into(a, i));
      // What context.next() returns is the next backend's (or the default's) answer in the caller's
      // types: never restored. Passed on as given: none, and the call's own arguments go on (the
      // outermost context knows them, however many wrappers deep this is).
      let passedOn: { value: unknown } | undefined;
      const next = (...given: unknown[]): unknown => {
        passedOn = { value: context.next(...given) };
        return passedOn.value;
      };
      const inner = innerContext(context, wraps.backend, args, converted, into, next);
      const real = realImpl(impl);
      // Declined: passed on as the trace says, "its shouldRun() returned false", not as a context.next() of its own.
      if (real.shouldRun !== undefined && !(real.shouldRun as Fn)(inner, ...converted)) return inner[contextDeclined]();
      const result = real.usesContext === true ? (real as Fn).call(this, inner, ...converted) : (real as Fn).apply(this, converted);
      if (passedOn !== undefined && result === passedOn.value) return result;
      try {
        return restore(result, context);
      } catch (error) {
        throw fail("restore", error, { result });
      }
    };
    Object.defineProperty(wrapper, "name", { value: `${fn} (wraps ${wraps.backend})` });
    wrappedBackends.set(wrapper, wraps.backend);
    wrappedImplementations.set(wrapper, impl);
    const wrapping = Object.assign(wrapper, { usesContext: true }) as unknown as Implementation;
    made.set(op, { inner: impl, wrapper: wrapping });
    return wrapping;
  };
}
