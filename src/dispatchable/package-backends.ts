/**
 * Backends a package declares for a set in its package.json
 * (`"dispatchHook": { "dispatchables": { "<set>": { "<backend>": { … } } } }`), read the first time
 * the set decides anything, so that a third-party backend needs no code in the framework. A
 * declaration the set refuses is a warning with the refusal's code, and that backend is left out.
 */
import { path } from "../builtins.js";
import { Discovery } from "../hooks/discovery.js";
import type { DispatchHookError } from "../registry/errors.js";

export function declarePackageBackends(
  set: string,
  discover: true | string,
  declare: (declaration: Record<string, unknown>, declaredIn: string) => void,
): void {
  const discovery = new Discovery({ ...(typeof discover === "string" ? { root: discover } : {}), transitive: true });
  for (const d of discovery.config().dispatchables) {
    if (d.set !== set) continue;
    try {
      declare({ ...(d.declaration as object), name: d.backend, base: d.dir }, d.declaredIn);
    } catch (error) {
      const e = error as DispatchHookError;
      process.emitWarning(`${path.relative(process.cwd(), d.declaredIn) || d.declaredIn}: ${e.message} The backend is left out.`, {
        code: e.code,
      });
    }
  }
}
