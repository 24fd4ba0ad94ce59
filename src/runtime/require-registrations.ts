/**
 * The registration modules of a CommonJS dispatch module, loaded with require() once the module has
 * finished loading (by a host's CommonJS facade, or by the epilogue appended to the module itself),
 * each in its window, with a throw or a missing file recorded instead of rethrown.
 */
import type { ModuleInfo, WindowInfo } from "../channel.js";
import { missingRegistration, runRegistration } from "./window.js";

export interface RequiredRegistration {
  readonly window: WindowInfo;
  /** What to pass to require(). */
  readonly path: string;
  /** Set when the file is known to be missing. */
  readonly missing?: string;
}

export function requireRegistrations(
  module: ModuleInfo,
  exports: unknown,
  load: (id: string) => unknown,
  registrations: readonly RequiredRegistration[],
): void {
  for (const registration of registrations) {
    if (registration.missing !== undefined) missingRegistration(registration.window, module, exports, registration.missing);
    else runRegistration(registration.window, module, exports, () => load(registration.path));
  }
}

/** What a CommonJS module's `module` gives the epilogue. */
interface LoadingModule {
  exports: unknown;
  readonly loaded?: boolean;
}

/**
 * Generated code (the epilogue, at the end of a module's body): requires the registration modules
 * once the module has finished loading, when its loader first reads `module.exports` after setting
 * `module.loaded` (see hooks/instrument.ts). Until then `module.exports` reads and writes as usual,
 * so a require() cycle gets what it would get without us; then the plain property is put back
 * before the first registration module runs. A host whose modules have no `loaded` flag gets them
 * at once.
 */
export function requireWhenLoaded(
  module: LoadingModule,
  info: ModuleInfo,
  load: (id: string) => unknown,
  registrations: readonly RequiredRegistration[],
): void {
  if (registrations.length === 0) return;
  if (typeof module.loaded !== "boolean") {
    requireRegistrations(info, module.exports, load, registrations);
    return;
  }
  let value = module.exports;
  Object.defineProperty(module, "exports", {
    configurable: true,
    enumerable: true,
    get() {
      if (module.loaded !== true) return value;
      Object.defineProperty(module, "exports", { configurable: true, enumerable: true, writable: true, value });
      requireRegistrations(info, value, load, registrations);
      return module.exports;
    },
    set(next: unknown) {
      value = next;
    },
  });
}
