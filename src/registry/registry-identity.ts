/**
 * How registries are told apart in a thread-wide audit: a name ("default", given, or "#n"), the
 * directory of the copy of dispatch-hook they belong to, and which registry is a copy's default
 * (with no loader installed, the one host adapters' facades feed).
 */
import { url } from "../builtins.js";

let created = 0;
const defaults = new WeakSet<object>();

/** The given name, or the next "#n". */
export function registryName(given: string | undefined): string {
  return given ?? `#${++created}`;
}

/** The package directory of this copy of dispatch-hook ("?" if it cannot be told). */
export const copyDirectory: string = (() => {
  try {
    return url.fileURLToPath(new URL("../..", import.meta.url));
  } catch {
    return "?";
  }
})();

/** @internal Marks a copy's default registry (default-registry.ts). */
export function markDefault<T extends object>(registry: T): T {
  defaults.add(registry);
  return registry;
}

export function isDefault(registry: object): boolean {
  return defaults.has(registry);
}
