/**
 * The diagnostics channels through which the parts of dispatch-hook meet. This file is the only
 * thing `registry/` and `hooks/` share. Names and payloads are a wire format: two copies of the
 * package in one process (of different versions) meet here, so a payload only ever gains optional
 * fields, and `version` changes when a field changes meaning.
 */
import diagnosticsChannel from "node:diagnostics_channel";

/** Published by an instrumented dispatch module at the end of its own evaluation. */
export interface ModuleEvaluatedMessage {
  readonly version: 1;
  /** The exact URL of the module instance (query and hash included). */
  readonly url: string;
  readonly backend: string;
  /** The name of the export that holds the backend's dispatch table. */
  readonly exportName: string;
  readonly format: "module" | "commonjs";
  /** The module namespace (ESM) or `module.exports` (CommonJS). */
  readonly namespace: unknown;
}

/** Published by a Dispatcher before it throws a miss, so registries can say why. */
export interface DispatchMissMessage {
  readonly version: 1;
  readonly table: object;
  readonly name: string;
  readonly backend: string | undefined;
  /** The received type and its ancestors, nearest first. */
  readonly chain: readonly Function[];
  /** Subscribers append one line each. */
  readonly hints: string[];
}

/** Published by a registry that wants to know whether any loader is installed in this thread. */
export interface LoaderStatusMessage {
  readonly version: 1;
  /** Subscribed installations push one entry each. */
  readonly installations: Array<{ readonly mode: string; readonly backends: readonly string[] }>;
}

export const channelNames = {
  moduleEvaluated: "dispatch-hook:module:evaluated",
  dispatchMiss: "dispatch-hook:dispatcher:miss",
  loaderStatus: "dispatch-hook:loader:status",
} as const;

export const channels = {
  moduleEvaluated: diagnosticsChannel.channel(channelNames.moduleEvaluated),
  dispatchMiss: diagnosticsChannel.channel(channelNames.dispatchMiss),
  loaderStatus: diagnosticsChannel.channel(channelNames.loaderStatus),
};
