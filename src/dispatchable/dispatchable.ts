/**
 * `dispatchable(defaultImpl, { name, args })`: a public function that chooses a backend on each call
 * by the types of its relevant arguments, and runs the default (reference) implementation when no
 * backend matches. The decision is cached per tuple of relevant types and per scope, and the cache
 * goes with any declaration, registration or option change. The last decision is kept beside the
 * cache, so a call with the same types as the one before costs a prototype read and a comparison
 * per relevant argument.
 */
import { DispatchHookError, describe } from "../registry/errors.js";
import { checkOptions } from "../registry/options.js";
import type { BackendSet } from "./backend-set.js";
import { type CallContext, type Implementation, implLabel, realImpl } from "./impl-table.js";
import { currentScope, type Scope, scopeHolder } from "./options-scope.js";
import { type Plan, plan, type Skip } from "./plan.js";
import { typeOf } from "./type-match.js";

type AnyFunction = (...args: never[]) => unknown;

/** Which arguments decide: indices, parameter names, or a function returning the values. */
export type RelevantArgs = readonly (number | string)[] | ((...args: never[]) => readonly unknown[]);

export interface DispatchableOptions {
  /** The function's name (default: the default implementation's name). */
  readonly name?: string;
  readonly args: RelevantArgs;
  /** The set of backends it dispatches to. */
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
};

/** The parameter names of a plain function or arrow, for `args` given by name. */
export function parameterNames(fn: Function): string[] {
  const text = Function.prototype.toString.call(fn);
  const arrow = /^(?:async\s*)?([A-Za-z_$][\w$]*)\s*=>/.exec(text);
  if (arrow !== null) return [arrow[1] as string];
  const open = text.indexOf("(");
  if (open < 0) return [];
  let depth = 0;
  let close = open;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") depth--;
    if (depth === 0) {
      close = i;
      break;
    }
  }
  const names: string[] = [];
  depth = 0;
  let current = "";
  for (const c of `${text.slice(open + 1, close)},`) {
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") depth--;
    if (c === "," && depth === 0) {
      names.push(/^\s*(?:\.\.\.)?([A-Za-z_$][\w$]*)/.exec(current)?.[1] ?? "");
      current = "";
    } else current += c;
  }
  return names;
}

interface Trie {
  plan?: Plan;
  next?: Map<object | null, Trie>;
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
  let labels: string[] = [];
  let extract: ((args: unknown[]) => unknown[]) | undefined;
  if (typeof options.args === "function") {
    const pick = options.args as (...args: unknown[]) => readonly unknown[];
    extract = (args) => [...pick(...args)];
  } else if (Array.isArray(options.args)) {
    indices = options.args.map((a) => {
      const index = typeof a === "number" ? a : params.indexOf(a);
      if (!Number.isInteger(index) || index < 0) {
        throw new DispatchHookError(
          "ERR_DISPATCH_INVALID_OPTION",
          `dispatchable(${name}): ${JSON.stringify(a)} is not ${typeof a === "number" ? "an argument index" : `a parameter of the default implementation (${params.join(", ") || "none found"})`}.`,
        );
      }
      return index;
    });
    labels = indices.map((i) => (params[i] ? `argument ${params[i]}` : `argument ${i}`));
  } else {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `dispatchable(${name}): args must be indices, parameter names or a function, got ${describe(options.args)}.`,
    );
  }
  set.describeFunction({
    name,
    relevant: indices === undefined ? "the values its args function picks" : labels.map((l) => l.replace(/^argument /, "")).join(", "),
    reference: defaultImpl.name || name,
  });
  const relevant = (args: unknown[]): unknown[] => (extract !== undefined ? extract(args) : (indices as number[]).map((i) => args[i]));
  const labelsFor = (n: number) => (labels.length === n ? labels : Array.from({ length: n }, (_, i) => `element ${i}`));

  let version = -1;
  let plain: Trie = {};
  let scoped = new WeakMap<Scope, Trie>();
  // The last decision outside any scope, for one or two relevant arguments by index.
  let last0: object | null | undefined;
  let last1: object | null | undefined;
  let lastImpl: Implementation | undefined;

  const decide = (values: unknown[], scope: Scope | undefined): Plan => {
    if (version !== set.version) {
      version = set.version;
      plain = {};
      scoped = new WeakMap();
      lastImpl = undefined;
    }
    let node = scope === undefined ? plain : scoped.get(scope);
    if (node === undefined) {
      node = {};
      scoped.set(scope as Scope, node);
    }
    const protos = values.map(typeOf);
    let at: Trie = node;
    for (const p of protos) {
      at.next ??= new Map();
      let child = at.next.get(p);
      if (child === undefined) {
        child = {};
        at.next.set(p, child);
      }
      at = child;
    }
    if (at.plan === undefined) {
      at.plan = plan(name, op, labelsFor(values.length), values, protos, set.control(scope));
      // control() may read package.json declarations the first time, which changes the version.
      if (version !== set.version) return decide(values, scope);
    }
    if (scope === undefined && indices !== undefined && indices.length <= 2) {
      const first = at.plan.candidates[0];
      const impl =
        first === undefined ? (at.plan.error === undefined ? (defaultImpl as unknown as Implementation) : undefined) : realImpl(first.impl);
      if (impl !== undefined && impl.shouldRun === undefined) {
        last0 = protos[0];
        last1 = protos[1];
        lastImpl = impl;
      }
    }
    return at.plan;
  };

  const run = (self: unknown, args: unknown[], scope: Scope | undefined): unknown => {
    const p = decide(relevant(args), scope);
    const skipped: Skip[] = scope?.trace === undefined ? [] : [...p.skipped];
    for (const candidate of p.candidates) {
      const impl = realImpl(candidate.impl);
      if (impl.shouldRun !== undefined) {
        const context: CallContext = { function: name, backend: candidate.backend, types: p.types };
        if (!(impl.shouldRun as (c: CallContext, ...a: unknown[]) => boolean)(context, ...args)) {
          skipped.push({ backend: candidate.backend, reason: "its shouldRun() returned false for this call" });
          continue;
        }
      }
      scope?.trace?.push({ function: name, types: p.types, ran: candidate.backend, skipped });
      return (impl as (...a: unknown[]) => unknown).apply(self, args);
    }
    if (p.error !== undefined) throw p.error;
    scope?.trace?.push({ function: name, types: p.types, ran: "default", skipped });
    return (defaultImpl as unknown as (...a: unknown[]) => unknown).apply(self, args);
  };

  const i0 = indices?.[0] ?? 0;
  const i1 = indices?.[1] ?? 0;
  const two = indices?.length === 2;
  const call = function (this: unknown, ...args: unknown[]): unknown {
    const scope = holder.entered ? currentScope(holder) : undefined;
    if (lastImpl !== undefined && scope === undefined && version === set.version) {
      const a = args[i0];
      const pa = typeof a === "object" && a !== null ? Object.getPrototypeOf(a) : typeOf(a);
      if (pa === last0) {
        if (!two) return lastImpl.apply(this, args as never[]);
        const b = args[i1];
        if ((typeof b === "object" && b !== null ? Object.getPrototypeOf(b) : typeOf(b)) === last1)
          return lastImpl.apply(this, args as never[]);
      }
    }
    return run(this, args, scope);
  };
  Object.defineProperty(call, "name", { value: name });
  return Object.assign(call, {
    reference: defaultImpl,
    op,
    backends: set,
    resolve(...args: unknown[]): Resolution {
      const scope = currentScope(holder);
      const p = decide(relevant(args), scope);
      const skipped = [...p.skipped];
      for (const candidate of p.candidates) {
        const impl = realImpl(candidate.impl);
        const context: CallContext = { function: name, backend: candidate.backend, types: p.types };
        if (impl.shouldRun !== undefined && !(impl.shouldRun as (c: CallContext, ...a: unknown[]) => boolean)(context, ...args)) {
          skipped.push({ backend: candidate.backend, reason: "its shouldRun() returned false for this call" });
          continue;
        }
        return { backend: candidate.backend, implementation: implLabel(candidate.impl), skipped };
      }
      if (p.error !== undefined) throw p.error;
      return { backend: "default", implementation: defaultImpl.name || name, skipped };
    },
  }) as unknown as Dispatchable<F>;
}
