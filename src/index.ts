/**
 * dispatch-hook: registrations that land in lazily loaded dispatch tables, and an audit that
 * proves they did. This entry only re-exports: the exports map is the public API.
 */

export { announce } from "./announce.js";
export { register, registry } from "./default-registry.js";
export type { BackendDeclaration, BackendSet, BackendSetOptions, FunctionMap } from "./dispatchable/backend-set.js";
export { createBackends } from "./dispatchable/backend-set.js";
export type { Dispatchable, DispatchableOptions, RelevantArgs, Resolution } from "./dispatchable/dispatchable.js";
export { dispatchable } from "./dispatchable/dispatchable.js";
export type { BackendInfo } from "./dispatchable/docs.js";
export type { CallContext, Implementation, ImplementationOf } from "./dispatchable/impl-table.js";
export type { BackendOptions, TraceEntry } from "./dispatchable/options-scope.js";
export { backendOptions } from "./dispatchable/options-scope.js";
export type { Disagreement, ReferenceCheckOptions, ReferenceReport } from "./dispatchable/reference-check.js";
export { referenceCheck } from "./dispatchable/reference-check.js";
export type { TypeSpec } from "./dispatchable/type-match.js";
export type { Wraps } from "./dispatchable/wrapping.js";
export type {
  AuditEvent,
  AuditEventKind,
  AuditLog,
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
  Registry,
  RegistryOptions,
  RegistrySnapshot,
  TableHandle,
} from "./registry/registry.js";
export { createRegistry } from "./registry/registry.js";
export type { TableAdapter } from "./registry/table-adapter.js";
export { threadAudit } from "./registry/thread-audit.js";
