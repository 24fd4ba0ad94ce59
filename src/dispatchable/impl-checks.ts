/**
 * Typos found early. An implementation given as `"specifier#export"` becomes a stub that loads it on
 * first use; a set created with `checkImplementations: "eager"` loads it at registration instead, so
 * a module that does not resolve or an export that is missing is ERR_DISPATCH_IMPL_LOAD there (a
 * warning with that code, and the backend left out, for a package.json declaration). And an
 * implementation keyed by a function name the set has no dispatchable of, near one it has
 * (`{ ad: … }` beside `add`), is ERR_DISPATCH_UNKNOWN_FUNCTION naming the near one. Names are
 * known once the set decides its first call (a library defines its functions at import); a name
 * near none may be a function defined later, and is left alone.
 */
import { DispatchHookError, describe } from "../registry/errors.js";
import { distance } from "../registry/options.js";
import { type Implementation, lazyStub, parseLazyImpl, realImpl } from "./impl-table.js";

/** An implementation as a function: a lazy name becomes a stub, loaded now when `eager`. */
export function toImplementation(impl: unknown, base: string, backend: string, fn: string, eager: boolean): Implementation {
  if (typeof impl === "function") return impl as Implementation;
  const lazy = typeof impl === "string" ? parseLazyImpl(impl) : undefined;
  if (lazy === undefined) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_IMPL",
      `Backend ${JSON.stringify(backend)}: the implementation of ${fn} must be a function or "specifier#export", got ${describe(impl)}.`,
    );
  }
  const stub = lazyStub(lazy, base, backend, fn);
  if (eager) realImpl(stub);
  return stub;
}

/** The known name a name is a typo of: one edit away, two for names of six letters or more. */
export function nearName(name: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const k of known) {
    const d = distance(name, k);
    if (d > 0 && d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return bestDistance <= (name.length >= 6 ? 2 : 1) ? best : undefined;
}

/** The error for implementations keyed by names near a function of the set, or undefined. */
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
    { details: { set, typos } },
  );
}
