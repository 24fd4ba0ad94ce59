/**
 * What an implementation says of itself, checked when it is declared or registered: `shouldRun` a
 * function, `usesContext` a boolean, and no own property a typo away from either (`useContext`), which
 * would otherwise be ignored and the call made without the context or the veto its author meant.
 */
import { DispatchHookError, describe } from "../registry/errors.js";
import { didYouMean } from "../registry/options.js";

const markers = ["shouldRun", "usesContext"];

export function checkMarkers<T extends Function>(impl: T, backend: string, fn: string): T {
  const refuse = (what: string): never => {
    throw new DispatchHookError("ERR_DISPATCH_INVALID_IMPL", `Backend ${JSON.stringify(backend)}: the implementation of ${fn} ${what}.`, {
      details: { backend, function: fn },
    });
  };
  const { shouldRun, usesContext } = impl as { shouldRun?: unknown; usesContext?: unknown };
  if (shouldRun !== undefined && typeof shouldRun !== "function") refuse(`has a shouldRun that is not a function (${describe(shouldRun)})`);
  if (usesContext !== undefined && typeof usesContext !== "boolean")
    refuse(`has a usesContext that is not true or false (${describe(usesContext)})`);
  for (const key of Object.keys(impl)) {
    const hint = markers.includes(key) ? "" : didYouMean(key, markers);
    if (hint !== "") refuse(`has a property ${JSON.stringify(key)}, which dispatch-hook does not read${hint}`);
  }
  return impl;
}
