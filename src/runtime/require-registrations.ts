/**
 * The registration modules of a CommonJS dispatch module, loaded with require() once the module has
 * finished loading (by its CommonJS facade, or by the epilogue a source-only host appends), each in
 * its window, with a throw or a missing file recorded instead of rethrown.
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
