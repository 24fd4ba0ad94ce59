/** dispatch-hook/hooks: the loader side, for test harnesses, apps that configure in code, and bundlers. */
export type { AuditAtExitOptions, AuditFile, AuditMode } from "./audit-mode.js";
export { auditAtExit, parseAuditMode } from "./audit-mode.js";
export type { LoaderFinding, ModuleEvaluatedMessage, TableNotice } from "./channel.js";
export { channelNames } from "./channel.js";
export type {
  BackendDeclaration,
  ConfigProblem,
  DiscoverOptions,
  DispatchHookField,
  HookConfig,
  PluginDeclaration,
  WatchRule,
} from "./config.js";
export { discover } from "./config.js";
export type { HookMode } from "./hook-mode.js";
export { hookMode } from "./hook-mode.js";
export type { Installation, InstallOptions, PluginOptions } from "./install.js";
export { install } from "./install.js";
export type { ModuleFormat } from "./instrument.js";
export { instrument } from "./instrument.js";
export type { ModulePlan } from "./matcher.js";
export { Matcher } from "./matcher.js";
