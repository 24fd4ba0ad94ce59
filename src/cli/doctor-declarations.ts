/**
 * The backend sets' package.json declarations, declared as their set declares them at run time, into
 * a scratch set of the same name in this process (nothing is loaded: names stay lazy, and none of the
 * app's code runs). One the set would refuse and leave out (an unknown option, a value of the wrong
 * type, a malformed wrapper) is a finding, as it is a warning and a strict audit's problem at run time.
 */
import { createBackends } from "../dispatchable/backend-set.js";
import type { HookConfig } from "../hooks/discovery.js";
import type { DispatchHookError } from "../registry/errors.js";
import type { Finding } from "./doctor-findings.js";

/** A finding per declaration its set would refuse, but for what `known` already says of that backend. */
export function refusedDeclarations(config: HookConfig, known: readonly Finding[]): Finding[] {
  const sets = new Map<string, ReturnType<typeof createBackends>>();
  try {
    return declareEach(config, known, sets);
  } finally {
    // Scratch: out of this process's audit (a run that runs doctor folds its record too).
    for (const set of sets.values()) set.registry.dispose();
  }
}

function declareEach(config: HookConfig, known: readonly Finding[], sets: Map<string, ReturnType<typeof createBackends>>): Finding[] {
  return config.dispatchables.flatMap((d) => {
    const set = sets.get(d.set) ?? sets.set(d.set, createBackends({ name: d.set, discover: false })).get(d.set)!;
    const backend = `${d.backend} [${d.set}]`;
    try {
      set.declare({ ...(d.declaration as object), name: d.backend, base: d.dir } as Parameters<typeof set.declare>[0], d.declaredIn);
      return [];
    } catch (error) {
      const e = error as DispatchHookError;
      if (known.some((f) => f.backend === backend && f.code === e.code)) return [];
      const fix = `Correct the declaration in ${d.declaredIn}: until then its set leaves the backend out.`;
      return [{ kind: "declaration" as const, backend, code: e.code, message: `backend ${d.backend} of ${d.set}: ${e.message}`, fix }];
    }
  });
}
