/**
 * One backend's implementations: a table the set's registry writes into, keyed by op class, which
 * tells the set of every change (so cached decisions go). A `"specifier#export"` sits in it as a stub
 * that loads it on first use. A call is synchronous, so the module is loaded with require()
 * (CommonJS, or an ES module without top-level await on Node >= 20.19 and 22.12); each failure is
 * ERR_DISPATCH_IMPL_LOAD, naming the backend and the function.
 */
import { nodeModule, path } from "../builtins.js";
import type { AuditEvent } from "../registry/audit-events.js";
import type { Class, Impl } from "../registry/dispatcher.js";
import { DispatchHookError, describe } from "../registry/errors.js";
import { didYouMean, distance } from "../registry/options.js";
import { checkMarkers } from "./impl-markers.js";

/** What a call passes to `shouldRun`, and first to an implementation with `usesContext: true` (spatch's `uses_context`). */
export interface CallContext {
  readonly function: string;
  /** The backend chosen (this implementation's). */
  readonly backend: string;
  /** The relevant arguments' type names (explicit types included). */
  readonly types: readonly string[];
  /** The matched types: the relevant values' classes, each once (to build results of the right type: `new context.classes[0](…)`). */
  // biome-ignore lint/suspicious/noExplicitAny: a class takes whatever its constructor does.
  readonly classes: ReadonlyArray<new (...args: any[]) => unknown>;
  /** The backends still to try after this one, in order, and "default" when the default may take the call. */
  readonly remaining: readonly string[];
  /** The scope's options in force (empty outside scopes). */
  readonly options: { readonly prioritize: readonly string[]; readonly disable: readonly string[]; readonly types: readonly unknown[] };
  /** Whether this backend is prioritized (by the environment or the scope). */
  readonly prioritized: boolean;
  /** Defers: runs the backends still to try, then the default, with these arguments (none: the call's own). */
  next(...args: unknown[]): unknown;
}

/** Where a context keeps its call's relevant values, for a wrapping backend to convert (not exported by the package). */
export const contextValues: unique symbol = Symbol("dispatch-hook relevant values");
/** Where a context keeps how to pass the call on when a wrapped implementation's shouldRun() declines it (the trace says why). */
export const contextDeclined: unique symbol = Symbol("dispatch-hook declined");
/** A context as dispatch-hook makes it. */
export type OwnContext = CallContext & { readonly [contextValues]: () => readonly unknown[]; readonly [contextDeclined]: () => unknown };

export type AnyFunction = (...args: never[]) => unknown;
export type Fn = (...args: unknown[]) => unknown;

/**
 * A backend's implementation of a function whose signature is `F`: the same parameters (each may be
 * narrower, as a backend's own array type is narrower than the public one; checked bivariantly, as
 * methods are) and a result `F` may return. With `usesContext: true`, the call's context comes first.
 */
export type ImplementationOf<F extends AnyFunction> =
  | ({ bivariant(...args: Parameters<F>): ReturnType<F> }["bivariant"] & {
      readonly shouldRun?: { bivariant(context: CallContext, ...args: Parameters<F>): boolean }["bivariant"];
      readonly usesContext?: false;
    })
  | ({ bivariant(context: CallContext, ...args: Parameters<F>): ReturnType<F> }["bivariant"] & {
      readonly shouldRun?: { bivariant(context: CallContext, ...args: Parameters<F>): boolean }["bivariant"];
      readonly usesContext: true;
    });

/** An implementation: a function, optionally with a per-call veto, or taking the call's context first. */
export type Implementation = ((...args: never[]) => unknown) & {
  readonly shouldRun?: (context: CallContext, ...args: never[]) => boolean;
  /** Called as `impl(context, ...args)`. */
  readonly usesContext?: boolean;
};

/** A `"specifier#export"` text, parsed. */
export interface LazyImpl {
  readonly specifier: string;
  readonly exportName: string;
  /** The text as written, for messages and docs. */
  readonly label: string;
}

export function parseLazyImpl(text: string): LazyImpl | undefined {
  const hash = text.lastIndexOf("#");
  if (hash <= 0 || hash === text.length - 1) return undefined;
  return { specifier: text.slice(0, hash), exportName: text.slice(hash + 1), label: text };
}

/** A require() for directory `base` (a relative one is the working directory's). */
const requireAt = (base: string) => nodeModule.createRequire(path.join(path.resolve(base), "noop.js"));
const resolveWith = (require: NodeJS.Require, base: string, specifier: string) =>
  require.resolve(specifier.startsWith(".") ? path.resolve(base, specifier) : specifier);

/** Requires `specifier` from directory `base`; `fail(why)` makes the error: it does not resolve, or loading it threw. */
export function requireFrom(base: string, specifier: string, fail: (why: string, cause?: unknown) => Error): Record<string, unknown> {
  const require = requireAt(base);
  let file: string;
  try {
    file = resolveWith(require, base, specifier);
  } catch (error) {
    throw fail(unresolvedText(specifier, base), error);
  }
  try {
    return require(file) as Record<string, unknown>;
  } catch (error) {
    throw fail(`loading ${JSON.stringify(specifier)} failed: ${error instanceof Error ? error.message : String(error)}`, error);
  }
}

/** Whether `specifier` resolves from directory `base`, as requireFrom() finds it; nothing is loaded. */
export function resolvesFrom(base: string, specifier: string): boolean {
  try {
    resolveWith(requireAt(base), base, specifier);
    return true;
  } catch {
    return false;
  }
}

const unresolvedText = (specifier: string, base: string) => `${JSON.stringify(specifier)} does not resolve from ${base}`;

const lazyText = (lazy: LazyImpl, backend: string, fn: string, why: string) =>
  `Backend ${JSON.stringify(backend)} names ${JSON.stringify(lazy.label)} as its implementation of ${fn}, but ${why}.`;

function loadLazyImpl(lazy: LazyImpl, base: string, backend: string, fn: string): (...args: never[]) => unknown {
  const fail = (why: string, cause?: unknown) =>
    new DispatchHookError("ERR_DISPATCH_IMPL_LOAD", lazyText(lazy, backend, fn, why), {
      cause,
      details: { backend, function: fn, implementation: lazy.label },
    });
  const namespace = requireFrom(base, lazy.specifier, fail);
  const impl = namespace?.[lazy.exportName] ?? (lazy.exportName === "default" ? namespace : undefined);
  if (typeof impl !== "function") {
    // A misspelt export: the module's function exports are what it could have meant.
    const exports = Object.keys(namespace ?? {}).filter((k) => typeof namespace?.[k] === "function");
    const hint = impl === undefined ? didYouMean(lazy.exportName, exports) : "";
    throw fail(`its export ${JSON.stringify(lazy.exportName)} is ${describe(impl)}, not a function${hint}`);
  }
  return impl as (...args: never[]) => unknown;
}

type Resolves = (base: string, specifier: string) => boolean;

/** Lazily named implementations' stubs: their names, their loaders, and why their module does not resolve. */
const lazies = new WeakMap<
  Function,
  { readonly label: string; load(): Implementation; unresolved(resolves: Resolves): string | undefined }
>();

/** Whether a specifier resolves from a directory: one require() per directory, each pair asked once. */
function resolver(): Resolves {
  const requires = new Map<string, NodeJS.Require>();
  const known = new Map<string, boolean>();
  return (base, specifier) => {
    const key = `${base}\0${specifier}`;
    let resolves = known.get(key);
    if (resolves === undefined) {
      const require = requires.get(base) ?? requires.set(base, requireAt(base)).get(base);
      try {
        resolveWith(require as NodeJS.Require, base, specifier);
        resolves = true;
      } catch {
        resolves = false;
      }
      known.set(key, resolves);
    }
    return resolves;
  };
}

/**
 * An implementation as a function: a function as it is; a `"specifier#export"` as a stub (a function,
 * so the registry takes it) that loads it on first use, or now when `eager`; undefined for anything else.
 */
export function asImplementation(impl: unknown, base: string, backend: string, fn: string, eager: boolean): Implementation | undefined {
  if (typeof impl === "function") return checkMarkers(impl, backend, fn) as Implementation;
  const lazy = typeof impl === "string" ? parseLazyImpl(impl) : undefined;
  if (lazy === undefined) return undefined;
  let loaded: Implementation | undefined;
  const load = () => {
    loaded ??= checkMarkers(loadLazyImpl(lazy, base, backend, fn) as Implementation, backend, fn);
    return loaded;
  };
  const stub = function (this: unknown, ...args: never[]) {
    return load().apply(this, args);
  };
  // Resolving runs none of the module's code: what an audit checks of an implementation not called yet.
  const unresolved = (resolves: Resolves) =>
    loaded !== undefined || resolves(base, lazy.specifier) ? undefined : lazyText(lazy, backend, fn, unresolvedText(lazy.specifier, base));
  lazies.set(stub, { label: lazy.label, load, unresolved });
  if (eager) load();
  return stub as Implementation;
}

/** As asImplementation, for a registration: anything else is ERR_DISPATCH_INVALID_IMPL. */
export function implementationOf(impl: unknown, base: string, backend: string, fn: string, eager: boolean): Implementation {
  const real = asImplementation(impl, base, backend, fn, eager);
  if (real !== undefined) return real;
  throw new DispatchHookError(
    "ERR_DISPATCH_INVALID_IMPL",
    `Backend ${JSON.stringify(backend)}: the implementation of ${fn} must be a function or "specifier#export", got ${describe(impl)}.`,
    { details: { backend, function: fn } },
  );
}

/**
 * What a backend set's audit says of its lazily named implementations (those in its tables, and its
 * wrappers' convert and restore) whenever it is read: each whose module does not resolve. Resolving
 * runs none of a module's code; a missing export is found when it loads (or by doctor --load).
 */
export function unresolvedImpls(
  backends: Iterable<{
    readonly name: string;
    readonly table: ImplTable;
    readonly wrapping: Record<"convert" | "restore", Implementation> | undefined;
  }>,
  ops: ReadonlyMap<string, Class>,
): AuditEvent[] {
  const events: AuditEvent[] = [];
  const resolves = resolver();
  for (const b of backends) {
    const given: Array<readonly [string, Impl | undefined]> = [...ops].map(([fn, op]) => [fn, b.table.get(op)] as const);
    if (b.wrapping !== undefined) given.push(["wraps.convert", b.wrapping.convert], ["wraps.restore", b.wrapping.restore]);
    for (const [op, impl] of given) {
      const message = impl === undefined ? undefined : lazies.get(impl)?.unresolved(resolves);
      if (message !== undefined) events.push({ kind: "unresolved", seq: -1, backend: b.name, op, message });
    }
  }
  return events;
}

/** The implementation to call: a stub's module is loaded now. */
export function realImpl(impl: Implementation): Implementation {
  return lazies.get(impl)?.load() ?? impl;
}

/** How an implementation is shown in docs: its lazy name, or its function name. */
export function implLabel(impl: Implementation): string {
  return lazies.get(impl)?.label ?? (impl.name || "(anonymous)");
}

export class ImplTable {
  readonly #entries = new Map<Class, Impl>();
  readonly #changed: () => void;

  constructor(changed: () => void) {
    this.#changed = changed;
  }

  register(type: Class, impl: Impl): void {
    this.#entries.set(type, impl);
    this.#changed();
  }

  unregister(type: Class): void {
    if (this.#entries.delete(type)) this.#changed();
  }

  get(type: Class): Impl | undefined {
    return this.#entries.get(type);
  }
}

/** The known name a name is a typo of: one edit away, two for names of six letters or more. */
export function nearName(name: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const k of known) {
    // One character changed in a one-character name is another name, not a typo of it (f, g).
    if (name.length < 2 || k.length < 2) continue;
    const d = distance(name, k);
    if (d > 0 && d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return bestDistance <= (name.length >= 6 ? 2 : 1) ? best : undefined;
}

/**
 * The error for implementations keyed by a name near one of the set's functions (`ad` beside `add`),
 * or undefined. A name near none may be a function defined later, and is left alone.
 */
export function unknownFunctions(
  set: string,
  names: ReadonlyArray<{ readonly backend: string; readonly fn: string }>,
  known: ReadonlySet<string>,
): DispatchHookError | undefined {
  const typos = names.flatMap(({ backend, fn }) => {
    const near = known.has(fn) ? undefined : nearName(fn, known);
    return near === undefined ? [] : [{ backend, fn, near }];
  });
  if (typos.length === 0) return undefined;
  const list = typos.map(
    (t) => `backend ${JSON.stringify(t.backend)} implements ${JSON.stringify(t.fn)} (did you mean ${JSON.stringify(t.near)}?)`,
  );
  return new DispatchHookError(
    "ERR_DISPATCH_UNKNOWN_FUNCTION",
    `${set} has no dispatchable function named so: ${list.join("; ")}. Its functions: ${[...known].join(", ")}. ` +
      "To fix: key the implementation by the function's name (or, for a function defined later, define it before the set's first call).",
    // One typo's backend and function are named as every other error names them; several are in `typos`.
    {
      details: { set, typos, ...(typos.length === 1 ? { backend: typos[0]?.backend, function: typos[0]?.fn, near: typos[0]?.near } : {}) },
    },
  );
}
