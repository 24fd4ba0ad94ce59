/**
 * Registration modules that require() runs (a CommonJS dispatch module's, and the Jest facade's),
 * each inside its window (window.ts), one after the other once the dispatch module has loaded; a
 * throw or a missing file is recorded and warned of, never rethrown.
 */
import { type ModuleInfo, summarizeError, type WindowInfo } from "../channel.js";
import { hub } from "../hub.js";
import { finish, missingRegistration, record, seen, timeline } from "./window.js";

/** Runs a registration module through `load` (require()), inside its window; a throw is recorded and warned of, not rethrown. */
export function runRegistration(info: WindowInfo, module: ModuleInfo, exports: unknown, load: () => unknown): void {
  const h = hub();
  if (seen(info, module, exports)) return;
  const line = timeline(module, exports);
  const fact = record(line, info);
  try {
    load();
    finish([info]);
    line.last = undefined;
  } catch (error) {
    fact.state = "failed";
    fact.error = summarizeError(error);
    h.settleWindow(fact);
    // Contained (require() returns the module): said, so that it is not silent without an audit.
    process.emitWarning(
      `${info.plugin}'s registration module for ${info.backend} (${info.module}) threw while it evaluated: ${fact.error.message.replace(/\.$/, "")}. ` +
        `The ${info.backend} backend loaded without what it registers.`,
      { code: "DISPATCH_HOOK_REGISTRATION_FAILED" },
    );
  } finally {
    h.enterWindow(line.outer);
  }
}

interface RequiredRegistration {
  readonly window: WindowInfo;
  /** What to pass to require(). */
  readonly path: string;
  /** Set when the file is known to be missing. */
  readonly missing?: string;
}

/** A CommonJS module's registration modules, required each in its window; a throw or a missing file is recorded. */
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
 * The epilogue's call: requires the registration modules when the module's loader first reads
 * `module.exports` after setting `module.loaded` (see hooks/instrument.ts). Until then a require()
 * cycle gets what it would without us; the plain property is put back before the first one runs.
 * A host whose modules have no `loaded` flag gets them at once.
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
