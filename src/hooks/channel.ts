/**
 * The diagnostics channels through which the parts of dispatch-hook meet. This file is the only
 * thing `registry/` and `hooks/` share. Names and payloads are a wire format: two copies of the
 * package in one process (of different versions) meet here, so a payload only ever gains optional
 * fields, and `version` changes when a field changes meaning.
 */

// process.getBuiltinModule, not `import`: building the ES module facade of a builtin costs
// start-up time (node:fs alone about 3 ms), and the loader runs at the start of every process.
const diagnosticsChannel = process.getBuiltinModule("node:diagnostics_channel");

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

/** Something a loader installation could not see or do, for the audit log. */
export interface LoaderFinding {
  readonly backend: string;
  readonly module: string;
  readonly problem: "unsignalled" | "instrument-failed";
  readonly message: string;
}

/** Published by a registry that wants to know whether any loader is installed in this thread. */
export interface LoaderStatusMessage {
  readonly version: 1;
  /** Subscribed installations push one entry each. */
  readonly installations: Array<{
    readonly mode: string;
    readonly backends: readonly string[];
    readonly findings?: readonly LoaderFinding[];
  }>;
}

/** Published by a framework's native `provide(backend, table)` (the exported shorthand). */
export interface TableProvidedMessage {
  readonly version: 1;
  readonly backend: string;
  readonly table: unknown;
  readonly module: string | undefined;
}

/** A table that exists, as remembered by an installation (hook) or by a copy's native provide(). */
export type TableNotice =
  | { readonly via: "hook"; readonly backend: string; readonly module: string; readonly namespace: unknown; readonly exportName: string }
  | { readonly via: "native"; readonly backend: string; readonly module: string | undefined; readonly table: unknown };

/**
 * Published by a registry that starts listening, to learn of tables that appeared before it did.
 * Everyone who remembers tables pushes them into `answers`.
 */
export interface TableQueryMessage {
  readonly version: 1;
  readonly answers: TableNotice[];
}

export const channelNames = {
  moduleEvaluated: "dispatch-hook:module:evaluated",
  tableProvided: "dispatch-hook:table:provided",
  tableQuery: "dispatch-hook:table:query",
  dispatchMiss: "dispatch-hook:dispatcher:miss",
  loaderStatus: "dispatch-hook:loader:status",
} as const;

export const channels = {
  moduleEvaluated: diagnosticsChannel.channel(channelNames.moduleEvaluated),
  tableProvided: diagnosticsChannel.channel(channelNames.tableProvided),
  tableQuery: diagnosticsChannel.channel(channelNames.tableQuery),
  dispatchMiss: diagnosticsChannel.channel(channelNames.dispatchMiss),
  loaderStatus: diagnosticsChannel.channel(channelNames.loaderStatus),
};
