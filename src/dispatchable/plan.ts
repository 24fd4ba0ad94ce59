/**
 * A call's decision for one tuple of relevant types (pure: cached per tuple and scope): the backends
 * that may run, in order, why each other was passed over, or the mixed-inputs error. And running it
 * when the implementation cannot be called straight away: `shouldRun`, the context, `context.next()`.
 */
import type { Class } from "../registry/dispatcher.js";
import { DispatchHookError } from "../registry/errors.js";
import { type CallContext, contextDeclined, contextValues, type Fn, type Implementation, type OwnContext, realImpl } from "./impl-table.js";
import type { Scope, TraceEntry } from "./options-scope.js";
import { type Claim, classesOf, type TypeSet, typeName } from "./type-match.js";
import { wrappedBackends, wrappedImplementations } from "./wrapping.js";

/** Why an implementation may not run: it wraps, at some depth, a blocked or disabled backend's. */
function blockedThrough(impl: Implementation | undefined, blocked: ReadonlyMap<string, string>): string | undefined {
  for (let f: Implementation | undefined = impl; f !== undefined; f = wrappedImplementations.get(f)) {
    const wrapped = wrappedBackends.get(f);
    const why = wrapped === undefined ? undefined : blocked.get(wrapped);
    if (why !== undefined) return `wraps ${wrapped}, which is ${why}`;
  }
  return undefined;
}

export interface PlanBackend {
  readonly name: string;
  readonly types: TypeSet;
  readonly requiresOptIn: boolean;
  /** The backend it wraps, if it wraps one. */
  readonly wraps?: string | undefined;
  implementation(op: Class): Implementation | undefined;
}

export interface Skip {
  readonly backend: string;
  readonly reason: string;
}

export interface Plan {
  readonly candidates: ReadonlyArray<{ readonly backend: string; readonly impl: Implementation }>;
  readonly skipped: readonly Skip[];
  readonly types: readonly string[];
  readonly error: DispatchHookError | undefined;
  /** Which value to ask whose protocols: the plan holds for values of these classes the protocols answer alike (answers()). */
  readonly asks: ReadonlyArray<readonly [number, TypeSet]>;
  /** What the protocols answered while it was made (answers()'s key): each asked once a plan. */
  readonly answered: string;
  /** The backends prioritized where it was made (by the environment or the scope). */
  readonly prioritized: ReadonlySet<string>;
}

/** What shapes the order: the sorted backends, the blocked ones (and by whom), the opted-in ones. */
export interface Control {
  readonly order: readonly PlanBackend[];
  readonly blocked: ReadonlyMap<string, string>;
  readonly optedIn: ReadonlySet<string>;
}

/** Rethrows an abstract type's load failure, or a protocol's throw, with the function's name (it names the backend). */
function naming<T>(fn: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== "ERR_DISPATCH_TYPE_LOAD" && code !== "ERR_DISPATCH_PROTOCOL") throw error;
    const e = error as DispatchHookError;
    throw new DispatchHookError(e.code, `${fn}(): ${e.message}`, { cause: e.cause, details: { ...e.details, function: fn } });
  }
}

/** The key of what the protocols say of `asks`' values: a letter each ("n" for null or undefined, "-" for no claim). */
function answerKey(asks: Plan["asks"], values: readonly unknown[], claim: (types: TypeSet, i: number) => Claim | undefined): string {
  let key = "";
  for (const [i, types] of asks) key += values[i] === null || values[i] === undefined ? "n" : (claim(types, i)?.[0] ?? "-");
  return key;
}

/** What the protocols a plan asked say of these values, as a key (asked anew on every call). */
export function answers(fn: string, p: Plan, values: readonly unknown[]): string {
  return naming(fn, () => answerKey(p.asks, values, (types, i) => types.protocolClaim(values[i])));
}

/** Why a backend has no implementation to offer: a wrapper of a backend the set does not declare has nothing to run. */
function lacking(b: PlanBackend, fn: string, all: readonly PlanBackend[]): string {
  if (b.wraps === undefined || all.some((other) => other.name === b.wraps)) return `has no implementation of ${fn}`;
  return `wraps ${JSON.stringify(b.wraps)}, which the set does not declare, and has no implementation of ${fn} of its own`;
}

export function plan(
  fn: string,
  op: Class,
  labels: readonly string[],
  values: readonly unknown[],
  protos: readonly (object | null)[],
  control: Control,
): Plan {
  return naming(fn, () => {
    const types = values.map(typeName);
    // Only backends that may run ask the values: a blocked or not opted-in backend's abstract type is never loaded.
    const asks: Array<readonly [number, TypeSet]> = [];
    // Each value's claim by each backend, asked once: a protocol that answers differently from one
    // ask to the next cannot make a plan contradict itself.
    const claims = new Map<TypeSet, Array<Claim | undefined | null>>();
    const claimOf = (set: TypeSet, i: number): Claim | undefined => {
      const row = claims.get(set) ?? [];
      claims.set(set, row);
      if (row[i] === undefined) row[i] = set.claim(values[i], protos[i] ?? null) ?? null;
      return row[i] ?? undefined;
    };
    const candidates: Array<{ backend: string; impl: Implementation }> = [];
    const skipped: Skip[] = [];
    const accepts = (b: PlanBackend): string | undefined => {
      let primary = false;
      for (let i = 0; i < values.length; i++) {
        if (values[i] === undefined || values[i] === null) continue;
        const claim = claimOf(b.types, i);
        if (claim === undefined) return `does not accept ${types[i]} (${labels[i]})`;
        if (claim === "primary") primary = true;
      }
      if (primary) return undefined;
      // Its most specific type that matches decides: a class declared secondary stands before a primary base or protocol.
      const secondary = values.flatMap((v, i) => (v === undefined || v === null ? [] : [types[i]]));
      return `none of the arguments is one of its primary types (${[...new Set(secondary)].join(", ")}: secondary)`;
    };
    for (const b of control.order) {
      const blocked = control.blocked.get(b.name);
      if (blocked !== undefined) {
        skipped.push({ backend: b.name, reason: blocked });
        continue;
      }
      if (b.requiresOptIn && !control.optedIn.has(b.name)) {
        skipped.push({ backend: b.name, reason: "requires opt-in: prioritize it to use it" });
        continue;
      }
      for (let i = 0; i < values.length; i++) if (b.types.asksValues(protos[i] ?? null)) asks.push([i, b.types] as const);
      const impl = b.implementation(op);
      // Through a wrapper (of a wrapper), a blocked or disabled backend's code would still run.
      const barred = blockedThrough(impl, control.blocked);
      if (barred !== undefined) {
        skipped.push({ backend: b.name, reason: barred });
        continue;
      }
      const refusal = impl === undefined ? lacking(b, fn, control.order) : accepts(b);
      if (refusal !== undefined) skipped.push({ backend: b.name, reason: refusal });
      else candidates.push({ backend: b.name, impl: impl as Implementation });
    }
    /**
     * The error for mixed inputs, or undefined when the default may take them: inputs no backend that
     * may run owns are the default's, and so are inputs that one such backend could take all of (it
     * has no implementation of this function, or passed it over). A blocked backend, one that wraps a
     * blocked one, or an opt-in one not opted in, owns nothing here: the default would convert silently what it was kept from.
     */
    const mixed = (): DispatchHookError | undefined => {
      const all = control.order.filter(
        (b) =>
          !control.blocked.has(b.name) &&
          (!b.requiresOptIn || control.optedIn.has(b.name)) &&
          blockedThrough(b.implementation(op), control.blocked) === undefined,
      );
      const owners = values.map((v, i) =>
        v === undefined || v === null ? [] : all.filter((b) => claimOf(b.types, i) === "primary").map((b) => b.name),
      );
      if (owners.every((o) => o.length === 0) || all.some((b) => accepts(b) === undefined)) return undefined;
      const args = values.map((_, i) => `${labels[i]} is ${types[i]}${owners[i]?.length ? ` (a type of ${owners[i]?.join(", ")})` : ""}`);
      const considered = skipped.map((s) => `${s.backend}: ${s.reason}`);
      return new DispatchHookError(
        "ERR_DISPATCH_MIXED_INPUTS",
        `${fn}() got inputs that no single backend accepts: ${args.join("; ")}.\n` +
          `  backends considered: ${considered.length === 0 ? "none" : considered.join("; ")}.\n` +
          "  Mixed inputs are never converted silently. To fix: convert the arguments to one backend's types before the call, or declare the other types as that backend's secondaryTypes.",
        { details: { function: fn, types, owners, considered } },
      );
    };
    const error = candidates.length === 0 ? mixed() : undefined;
    return { candidates, skipped, types, error, asks, answered: answerKey(asks, values, claimOf), prioritized: control.optedIn };
  });
}

const declinedReason = "its shouldRun() returned false for this call";

export interface RunSpec {
  readonly name: string;
  readonly defaultImpl: Fn;
}

/** Whether an implementation must be called through this path: a veto, or a context to pass. */
export function needsCall(impl: Implementation): boolean {
  return impl.shouldRun !== undefined || impl.usesContext === true;
}

/**
 * The context of function `fn` for candidate `i` of a plan. `values` gives the relevant values (read
 * only if the context's classes are); `next` runs the candidates after it, then the default.
 */
export function contextFor(
  fn: string,
  p: Plan,
  i: number,
  scope: Scope | undefined,
  values: () => readonly unknown[],
  next: (args: unknown[], reason?: string) => unknown,
): OwnContext {
  const backend = p.candidates[i]?.backend as string;
  let classes: CallContext["classes"] | undefined;
  let types: string[] | undefined;
  return {
    function: fn,
    backend,
    // This call's, not the plan's: values of one cache key may differ in name (null and undefined).
    get types() {
      types ??= values().map(typeName);
      return types;
    },
    get classes() {
      classes ??= classesOf(values());
      return classes;
    },
    remaining: [...p.candidates.slice(i + 1).map((c) => c.backend), ...(p.error === undefined ? ["default"] : [])],
    options: { prioritize: scope?.prioritize ?? [], disable: [...(scope?.disable ?? [])], types: scope?.types ?? [] },
    prioritized: p.prioritized.has(backend),
    next: (...args: unknown[]) => next(args),
    [contextValues]: values,
    [contextDeclined]: () => next([], declinedReason),
  };
}

export function runCandidates(
  spec: RunSpec,
  p: Plan,
  self: unknown,
  args: unknown[],
  scope: Scope | undefined,
  values: () => readonly unknown[],
): unknown {
  const skipped: Skip[] = scope?.trace === undefined ? [] : [...p.skipped];
  // One trace entry per call: a backend that defers moves to `skipped`, and `ran` names who ran.
  const types = scope?.trace === undefined ? p.types : values().map(typeName);
  const trace: { -readonly [K in keyof TraceEntry]: TraceEntry[K] } = { function: spec.name, types, ran: "default", skipped };
  let traced = false;
  const ran = (backend: string, impl?: Function) => {
    trace.ran = backend;
    const wraps = impl === undefined ? undefined : wrappedBackends.get(impl);
    if (wraps !== undefined) trace.wraps = wraps;
    else delete trace.wraps;
    if (!traced && scope?.trace !== undefined) scope.trace.push(trace);
    traced = true;
  };
  const run = (from: number, callArgs: unknown[]): unknown => {
    for (let i = from; i < p.candidates.length; i++) {
      const candidate = p.candidates[i] as Plan["candidates"][number];
      const impl = realImpl(candidate.impl);
      if (!needsCall(impl)) {
        ran(candidate.backend, impl);
        return (impl as Fn).apply(self, callArgs);
      }
      const context = contextFor(
        spec.name,
        p,
        i,
        scope,
        values,
        (nextArgs, reason = "deferred to the next backend with context.next()") => {
          skipped.push({ backend: candidate.backend, reason });
          return run(i + 1, nextArgs.length === 0 ? callArgs : nextArgs);
        },
      );
      if (impl.shouldRun !== undefined && !(impl.shouldRun as (c: CallContext, ...a: unknown[]) => boolean)(context, ...callArgs)) {
        skipped.push({ backend: candidate.backend, reason: declinedReason });
        continue;
      }
      ran(candidate.backend, impl);
      return impl.usesContext === true ? (impl as Fn).call(self, context, ...callArgs) : (impl as Fn).apply(self, callArgs);
    }
    if (p.error !== undefined) throw p.error;
    ran("default");
    return spec.defaultImpl.apply(self, callArgs);
  };
  return run(0, args);
}
