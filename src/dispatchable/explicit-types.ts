/**
 * Types a call is for beyond its arguments: `fn.like(JaxArray)(10)` for one call (NumPy's `like=`),
 * `backendOptions({ types: [JaxArray] }, …)` for a scope (spatch's `type=`). Selection treats each
 * as one more relevant argument: a class as an instance of that class (a stand-in made once per
 * class, whose prototype is the class's), anything else as the value itself. A scope's types apply
 * to the dispatchables whose set declares them and are ignored by the others, since a scope is seen
 * by every set in the realm.
 */
import { DispatchHookError, describe } from "../registry/errors.js";
import { WeakCache } from "./weak-cache.js";

const standIns = new WeakCache<object>();

/** A value that stands for a class in selection: an object whose prototype is the class's. */
export function standIn(type: unknown): unknown {
  if (typeof type !== "function" || typeof type.prototype !== "object" || type.prototype === null) return type;
  let value = standIns.get(type);
  if (value === undefined) {
    value = Object.create(type.prototype) as object;
    standIns.set(type, value);
  }
  return value;
}

/** Refuses explicit types that cannot stand for an argument (undefined, null). */
export function checkTypes(types: readonly unknown[] | undefined, where: string): void {
  const bad = types?.findIndex((t) => t === undefined || t === null) ?? -1;
  if (bad >= 0) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `${where}: types must be classes or values, got ${describe(types?.[bad])} at position ${bad}. To fix: pass the class (JaxArray) or an array of it.`,
    );
  }
}
