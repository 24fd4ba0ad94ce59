/**
 * dispatch-hook: registrations that land in lazily loaded dispatch tables, and an audit that
 * proves they did. This entry only re-exports: the exports map is the public API.
 */
export { register, registry } from "./default-registry.js";
export { provide } from "./provide.js";
export type {
  AuditEvent,
  AuditEventKind,
  AuditReport,
  BackendRecord,
  ErrorSummary,
  Mechanism,
  Origin,
  OutsideRecord,
  PluginModuleRecord,
  Problem,
  ProblemKind,
  RegistrationRecord,
  RegistrationState,
  VerifyOptions,
} from "./registry/audit-events.js";
export { formatReport } from "./registry/audit-format.js";
export { AuditLog } from "./registry/audit-log.js";
export type { Class, DispatcherOptions, Impl } from "./registry/dispatcher.js";
export { Dispatcher, isDispatcher } from "./registry/dispatcher.js";
export type { ErrorCode, WarningCode } from "./registry/errors.js";
export { DispatchHookError, errorCodes, warningCodes } from "./registry/errors.js";
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
export { threadAudit } from "./registry/thread-audit.js";
