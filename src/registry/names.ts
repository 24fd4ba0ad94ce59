/**
 * The one rule for backend names, used by the registry's API and by config files alike: a non-empty
 * string without whitespace or path separators, and not a name every object already has.
 */
import { DispatchHookError, describe } from "./errors.js";

const reserved = new Set(["__proto__", "constructor", "prototype"]);

/** Why `name` cannot be a backend name, or undefined if it can. */
export function backendNameProblem(
  name: unknown,
): { code: "ERR_DISPATCH_INVALID_BACKEND" | "ERR_DISPATCH_RESERVED_NAME"; reason: string } | undefined {
  if (typeof name !== "string" || name.length === 0) {
    return { code: "ERR_DISPATCH_INVALID_BACKEND", reason: `the backend must be a non-empty string, got ${describe(name)}` };
  }
  if (reserved.has(name)) {
    return {
      code: "ERR_DISPATCH_RESERVED_NAME",
      reason: `${JSON.stringify(name)} cannot be a backend name, because it names a property of every object; choose another name`,
    };
  }
  if (/[\s/\\]/.test(name)) {
    return {
      code: "ERR_DISPATCH_INVALID_BACKEND",
      reason: `${JSON.stringify(name)} cannot be a backend name: it contains whitespace or a path separator; use a plain name such as numba`,
    };
  }
  return undefined;
}

export function checkBackend(backend: unknown, where: string): asserts backend is string {
  const problem = backendNameProblem(backend);
  if (problem !== undefined) throw new DispatchHookError(problem.code, `${where}: ${problem.reason}.`);
}
