/** The default registry, for plugins, and the `register()` shorthand for it. */
import { declaredBackends } from "./hooks/declared-backends.js";
import type { Class, Impl } from "./registry/dispatcher.js";
import { auditFromEnvironment, provideDeclared } from "./registry/exit-audit.js";
import { type RegisterOptions, type RegistrationHandle, Registry } from "./registry/registry.js";
import { markDefault } from "./registry/thread-audit.js";

/** The default registry. Creating it subscribes to nothing and changes nothing. */
export const registry: Registry = markDefault(new Registry({ name: "default" }));

/** Shorthand for `registry.register(...)` on the default registry. */
export function register(backend: string, opType: Class, impl: Impl, options?: RegisterOptions): RegistrationHandle {
  return registry.registerFrom(register, backend, opType, impl, options);
}

// The exit audit the environment asks for, in every thread that loads dispatch-hook (see exit-audit.ts);
// with no loader, it reads the project's declarations for the backends registrations wait for.
provideDeclared(declaredBackends);
auditFromEnvironment();
