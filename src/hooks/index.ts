/** dispatch-hook/hooks: the loader side, for test harnesses, apps that configure in code, and host adapters. */

export type { LoaderFinding, ModuleInfo, TableNotice } from "../channel.js";
export type { AuditAtExitOptions, AuditFile, AuditMode } from "./audit-mode.js";
export { auditAtExit, parseAuditMode } from "./audit-mode.js";
export type {
  BackendDeclaration,
  ConfigProblem,
  DiscoverOptions,
  DispatchHookField,
  HookConfig,
  PluginDeclaration,
  WatchRule,
} from "./discovery.js";
export { Discovery, discover } from "./discovery.js";
export type { FacadeInput, FacadeRegistration } from "./facade.js";
export { facadeSource, markerSource } from "./facade.js";
export type { HookMode } from "./hook-mode.js";
export { hookMode } from "./hook-mode.js";
export type { Installation, InstallOptions, PluginOptions } from "./install.js";
export { install } from "./install.js";
export type { EpilogueInput } from "./instrument.js";
export { instrument } from "./instrument.js";
export type { ModulePlan, PlannedRegistration } from "./matcher.js";
export { Matcher } from "./matcher.js";
