/** dispatch-hook/hooks: the loader side, for test harnesses, apps that configure in code, and host adapters. */

export type { LoaderFinding, ModuleInfo, TableNotice } from "../channel.js";
export type { AuditAtExitOptions, AuditMode } from "../registry/exit-audit.js";
export { auditAtExit, parseAuditMode } from "../registry/exit-audit.js";
export type { ProcessRecord, RecordWriter } from "../registry/run-records.js";
export { runDirVariable } from "../registry/run-records.js";
export type {
  ConfigProblem,
  DiscoverOptions,
  DispatchHookField,
  DispatchModuleDeclaration,
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
export type { KnownExit, RunAudit, RunProcess } from "./run-fold.js";
export { foldRun, formatRun } from "./run-fold.js";
