/**
 * dispatch-hook: registrations that land in lazily loaded dispatch tables, and an audit that
 * proves they did.
 */
import { channels, type TableNotice, type TableProvidedMessage, type TableQueryMessage } from "./hooks/channel.js";
import type { Class, Impl } from "./registry/dispatcher.js";
import { DispatchHookError, describe } from "./registry/errors.js";
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

const announced: TableNotice[] = [];
const answer = (message: unknown) => {
  (message as TableQueryMessage).answers.push(...announced);
};

/**
 * The framework-native route: call it at the end of a backend's dispatch module. It announces the
 * table to every registry in the process, of every copy of dispatch-hook, including registries
 * that start waiting later. No loader is needed.
 */
export function provide(backend: string, table: object, meta: { readonly module?: string } = {}): void {
  if (typeof backend !== "string" || backend.length === 0) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_BACKEND",
      `provide(): the backend must be a non-empty string, got ${describe(backend)}.`,
    );
  }
  if ((typeof table !== "object" && typeof table !== "function") || table === null) {
    throw new DispatchHookError(
      "ERR_DISPATCH_TABLE_SHAPE",
      `provide(${JSON.stringify(backend)}, …): the table must be an object, got ${describe(table)}.`,
    );
  }
  if (announced.length === 0) channels.tableQuery.subscribe(answer);
  announced.push({ via: "native", backend, module: meta.module, table });
  if (channels.tableProvided.hasSubscribers) {
    channels.tableProvided.publish({ version: 1, backend, table, module: meta.module } satisfies TableProvidedMessage);
  }
}
