/**
 * dispatch-hook: registrations that land in lazily loaded dispatch tables, and an audit that
 * proves they did.
 */
import type { Class, Impl } from "./registry/dispatcher.js";
import { type RegisterOptions, type RegistrationHandle, Registry } from "./registry/registry.js";

export type {
  AuditEvent,
  AuditEventKind,
  AuditReport,
  ErrorSummary,
  Mechanism,
  Problem,
  ProblemKind,
  RegistrationRecord,
  RegistrationState,
  VerifyOptions,
} from "./registry/audit-log.js";
export { AuditLog } from "./registry/audit-log.js";
export type { Class, DispatcherOptions, Impl } from "./registry/dispatcher.js";
export { Dispatcher, isDispatcher } from "./registry/dispatcher.js";
export type { ErrorCode } from "./registry/errors.js";
export { DispatchHookError, errorCodes } from "./registry/errors.js";
export type {
  DeclareOptions,
  HandleState,
  ProvideMeta,
  RegisterOptions,
  RegistrationHandle,
  RegistryOptions,
  RegistrySnapshot,
  TableHandle,
} from "./registry/registry.js";
export { createRegistry, Registry } from "./registry/registry.js";
export type { TableAdapter } from "./registry/table-adapter.js";

/** The default registry, for plugins. Creating it subscribes to nothing and changes nothing. */
export const registry: Registry = new Registry();

/** Shorthand for `registry.register(...)` on the default registry. */
export function register(backend: string, opType: Class, impl: Impl, options?: RegisterOptions): RegistrationHandle {
  return registry.registerFrom(register, backend, opType, impl, options);
}
