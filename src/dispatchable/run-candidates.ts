/**
 * The per-call work of a decision that cannot be answered straight away: each candidate's
 * `shouldRun` veto, the context an implementation asks for (spatch's `uses_context`), deferral to
 * the next candidate through `context.next()`, the trace, the mixed-inputs error and the default.
 */
import type { CallContext, Implementation } from "./impl-table.js";
import { realImpl } from "./impl-table.js";
import type { Scope, TraceEntry } from "./options-scope.js";
import type { Plan, Skip } from "./plan.js";
import { typeOf } from "./type-match.js";
import { wrappedBackend } from "./wrapping.js";

type Fn = (...args: unknown[]) => unknown;

export interface RunSpec {
  readonly name: string;
  readonly defaultImpl: Fn;
}

/** The classes of the relevant values (explicit types included), each once, in order. */
function classesOf(values: readonly unknown[]): Function[] {
  const out: Function[] = [];
  for (const v of values) {
    const proto = typeOf(v) as { constructor?: unknown } | null;
    const ctor = proto === null ? undefined : proto.constructor;
    if (typeof ctor === "function" && !out.includes(ctor)) out.push(ctor);
  }
  return out;
}

/** Whether an implementation must be called through this path: a veto, or a context to pass. */
export function needsCall(impl: Implementation): boolean {
  return impl.shouldRun !== undefined || impl.usesContext === true;
}

/**
 * The context for candidate `i` of a plan. `values` gives the relevant values (read only if the
 * context's classes are read); `next` runs the candidates after it, then the default.
 */
export function contextFor(
  spec: RunSpec,
  p: Plan,
  i: number,
  scope: Scope | undefined,
  values: () => readonly unknown[],
  next: (args: unknown[]) => unknown,
): CallContext {
  const backend = p.candidates[i]?.backend as string;
  let classes: Function[] | undefined;
  return {
    function: spec.name,
    backend,
    types: p.types,
    get classes() {
      classes ??= classesOf(values());
      return classes;
    },
    remaining: [...p.candidates.slice(i + 1).map((c) => c.backend), ...(p.error === undefined ? ["default"] : [])],
    options: { prioritize: scope?.prioritize ?? [], disable: [...(scope?.disable ?? [])], types: scope?.types ?? [] },
    prioritized: p.prioritized.has(backend),
    next: (...args: unknown[]) => next(args),
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
  const trace: { -readonly [K in keyof TraceEntry]: TraceEntry[K] } = { function: spec.name, types: p.types, ran: "default", skipped };
  let traced = false;
  const ran = (backend: string, impl?: Function) => {
    trace.ran = backend;
    const wraps = impl === undefined ? undefined : wrappedBackend(impl);
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
      const context = contextFor(spec, p, i, scope, values, (nextArgs) => {
        skipped.push({ backend: candidate.backend, reason: "deferred to the next backend with context.next()" });
        return run(i + 1, nextArgs.length === 0 ? callArgs : nextArgs);
      });
      if (impl.shouldRun !== undefined && !(impl.shouldRun as (c: CallContext, ...a: unknown[]) => boolean)(context, ...callArgs)) {
        skipped.push({ backend: candidate.backend, reason: "its shouldRun() returned false for this call" });
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
