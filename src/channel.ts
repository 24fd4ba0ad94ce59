/**
 * The wire contract: the diagnostics channels through which the parts of dispatch-hook meet, and
 * their payloads. The registry, the loader, the generated code's runtime and every installed copy of
 * the package (of any version) meet only here. A payload only ever gains optional fields, and its
 * `version` changes when a field changes meaning. Every channel is named `dispatch-hook:area:event`.
 *
 * The design rule: every fact lives with the object it is about (a registration with its registry, a
 * table with its notice, a plugin module's load with its window, the loader's config with its
 * installation), and answers thread-wide queries here. Nothing is kept in module-level state, so a
 * second copy of the package sees everything the first one knows.
 *
 * Every message carries the realm (the global object) of the code that published it, and listeners
 * ignore other realms' messages. Node's channels are one per thread, but a host that runs each test
 * file in a vm context of its own (Jest, Vitest's vm pools) evaluates every module again in each, and
 * a registry or table of one test file must never meet those of the next.
 */
import { diagnosticsChannel } from "./builtins.js";

/** Marks Dispatcher instances across copies of the package, where `instanceof` would fail. */
export const dispatcherBrand: unique symbol = Symbol.for("dispatch-hook.dispatcher");

export interface ErrorSummary {
  readonly name: string;
  readonly message: string;
  readonly code: string | undefined;
}

export function summarizeError(error: unknown): ErrorSummary {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { name: error.name, message: error.message, code: typeof code === "string" ? code : undefined };
  }
  return { name: "non-error", message: String(error), code: undefined };
}

/** What a loader signal says about one evaluated dispatch module instance. */
export interface ModuleInfo {
  /** The exact URL of the module instance (query and hash included). */
  readonly url: string;
  readonly backend: string;
  /** The name of the export that holds the backend's dispatch table. */
  readonly exportName: string;
  readonly format: "module" | "commonjs";
  /**
   * Set by a host adapter's facade (Vite, esbuild, Jest), where no loader is installed to answer
   * for the declarations: the plugins declared for this backend, carried with the table.
   */
  readonly host?: HostFacts;
}

/** What a host adapter knew of a dispatch module's backend when it generated the facade. */
export interface HostFacts {
  /** The adapter: "dispatch-hook/vite", "dispatch-hook/esbuild", "dispatch-hook/jest". */
  readonly name: string;
  /** The plugins with a registration module or expectations for this backend, for this backend only. */
  readonly plugins: readonly PluginStatus[];
}

/** Published when a watched dispatch module has finished evaluating. */
export interface ModuleEvaluatedMessage extends ModuleInfo {
  readonly version: 1;
  /** The module namespace (ESM) or `module.exports` (CommonJS). */
  readonly namespace: unknown;
}

/** Published by a framework's native `provide(backend, table)`. */
export interface TableProvidedMessage {
  readonly version: 1;
  readonly backend: string;
  readonly table: unknown;
  readonly module: string | undefined;
}

/** A table that exists in this thread, as its notice remembers it. */
export type TableNotice =
  | {
      readonly via: "hook";
      readonly backend: string;
      readonly module: string;
      readonly namespace: unknown;
      readonly exportName: string;
      readonly host?: HostFacts | undefined;
    }
  | { readonly via: "native"; readonly backend: string; readonly module: string | undefined; readonly table: unknown };

/** Published to learn of every table in the thread; each notice of the asker's realm pushes itself into `answers`. */
export interface TableQueryMessage {
  readonly version: 1;
  readonly answers: TableNotice[];
  /** When present, every notice of every realm pushes itself here too, with a way to stop answering. */
  readonly everyRealm?: Array<{ readonly notice: TableNotice; readonly realm: object; readonly retire: () => void }>;
}

/** Asked by a registration window about an entry that changed while it was open: did a registry write it? */
export interface TableWrittenMessage {
  readonly version: 1;
  readonly table: object;
  /** The entry's key: an op type, or an op's name in a table keyed by name. */
  readonly opType: Function | string;
  readonly impl: unknown;
  /** A registry that wrote exactly this entry sets it. */
  written: boolean;
}

/** Published by a Dispatcher before it throws a miss, so registries and loaders can say why. */
export interface DispatchMissMessage {
  readonly version: 1;
  readonly table: object;
  readonly name: string;
  readonly backend: string | undefined;
  /** The received type and its ancestors, nearest first. */
  readonly chain: readonly Function[];
  /** Registries append one line each about registrations for the missed type. */
  readonly hints: string[];
  /** Loaders append what they know about the backend (added in the same version: optional). */
  readonly context?: string[];
}

/** Something a loader installation could not see or do. */
export interface LoaderFinding {
  readonly backend: string;
  readonly module: string;
  readonly problem: "unsignalled" | "instrument-failed" | "left-alone";
  readonly message: string;
}

/** A plugin as a loader knows it from a `dispatchHook` declaration. */
export interface PluginStatus {
  readonly name: string;
  readonly declaredIn: string;
  /** Backend → file URL of the registration module. */
  readonly registrations: Readonly<Record<string, string>>;
  readonly expects: Readonly<Record<string, readonly string[]>>;
}

/** One installation's answer to a loader status query. */
export interface InstallationStatus {
  readonly mode: string;
  /** Named backends, and `{backend}` for a pattern. */
  readonly backends: readonly string[];
  readonly findings?: readonly LoaderFinding[];
  /** The registry the installation was connected to (same thread, so the object itself). */
  readonly registry?: object;
  /** Every package.json or config file it read. */
  readonly files?: readonly string[];
  /** Where discovery started: the entry point's package, or the working directory. */
  readonly root?: string;
  /** One line per declaration: "numba (tensorlab: ./link/numba/dispatch/basic.js)". */
  readonly declarations?: readonly string[];
  readonly plugins?: readonly PluginStatus[];
}

/** Published by whoever wants to know what loaders are installed in this thread. */
export interface LoaderStatusMessage {
  readonly version: 1;
  readonly installations: InstallationStatus[];
}

/**
 * A registration window: the evaluation of one plugin's registration module for one dispatch module
 * instance. Registrations made inside it are declarative (the plugin's, not the app's).
 */
export interface WindowInfo {
  /** Unique per dispatch module instance and registration module. */
  readonly id: string;
  /** The dispatch module instance whose backend loaded. */
  readonly url: string;
  readonly backend: string;
  readonly plugin: string;
  /** The registration module's URL. */
  readonly module: string;
}

/** An entry a registration module wrote into the table directly, not through a registry. */
export interface OutsideWrite {
  readonly op: string;
  /** The entry's key: an op type, or an op's name in a table keyed by name. */
  readonly opType: Function | string;
  /** True when it replaced an entry that was there before the module ran. */
  readonly replaced: boolean;
}

export type WindowState = "open" | "done" | "missing" | "failed";

/** What a window knows; windows answer queries about themselves for as long as their table lives. */
export interface WindowFact {
  readonly info: WindowInfo;
  readonly state: WindowState;
  readonly outside: readonly OutsideWrite[];
  readonly error: ErrorSummary | undefined;
}

export interface WindowQueryMessage {
  readonly version: 1;
  readonly windows: WindowFact[];
}

/** Asked by a registry on each registration: only windows open now answer, so with none open the channel has no subscriber at all. */
export interface WindowCurrentMessage {
  readonly version: 1;
  readonly open: WindowInfo[];
}

/** Published by an audit that speaks for the whole thread; every registry of every copy answers. */
export interface AuditCollectMessage {
  readonly version: 1;
  readonly registries: Array<{
    /** "default" or "#n", and the directory of the copy of dispatch-hook it belongs to. */
    readonly name: string;
    readonly copy: string;
    /** Its audit events, as plain data. */
    readonly events: readonly unknown[];
  }>;
}

/** The holder of scoped backend options, shared by every copy in a realm. */
export interface BackendScopeMessage {
  /** The holder's shape: a copy answers only an ask of its own version (2: live scopes, the synchronous scope, keys per async id). */
  readonly version: 2;
  holder?: { storage: unknown; live: number };
}

export const channelNames = {
  moduleEvaluated: "dispatch-hook:module:evaluated",
  tableProvided: "dispatch-hook:table:provided",
  tableQuery: "dispatch-hook:table:query",
  tableWritten: "dispatch-hook:table:written",
  dispatchMiss: "dispatch-hook:dispatcher:miss",
  loaderStatus: "dispatch-hook:loader:status",
  windowQuery: "dispatch-hook:registrations:query",
  windowCurrent: "dispatch-hook:registrations:current",
  auditCollect: "dispatch-hook:audit:collect",
  /** Never published: the one exit audit of a thread subscribes to claim it, so a second loader does not print a second. */
  auditExit: "dispatch-hook:audit:exit",
  /** Asked once per copy: the scoped backend options every copy shares (dispatchable/options-scope.ts). */
  backendScope: "dispatch-hook:backends:scope",
} as const;

export const channels = {
  moduleEvaluated: diagnosticsChannel.channel(channelNames.moduleEvaluated),
  tableProvided: diagnosticsChannel.channel(channelNames.tableProvided),
  tableQuery: diagnosticsChannel.channel(channelNames.tableQuery),
  tableWritten: diagnosticsChannel.channel(channelNames.tableWritten),
  dispatchMiss: diagnosticsChannel.channel(channelNames.dispatchMiss),
  loaderStatus: diagnosticsChannel.channel(channelNames.loaderStatus),
  windowQuery: diagnosticsChannel.channel(channelNames.windowQuery),
  windowCurrent: diagnosticsChannel.channel(channelNames.windowCurrent),
  auditCollect: diagnosticsChannel.channel(channelNames.auditCollect),
  auditExit: diagnosticsChannel.channel(channelNames.auditExit),
  backendScope: diagnosticsChannel.channel(channelNames.backendScope),
};

/** Where a message comes from: the global object of the publishing code's realm. */
export interface FromRealm {
  realm?: object;
}

/** Whether a message was published in this realm (a message from a copy that predates realms counts as ours). */
export function sameRealm(message: unknown): boolean {
  const realm = (message as FromRealm).realm;
  return realm === undefined || realm === globalThis;
}

/** Publishes a message stamped with this realm. */
export function publish<M extends { readonly version: number }>(channel: (typeof channels)[keyof typeof channels], message: M): M {
  (message as FromRealm).realm = globalThis;
  channel.publish(message);
  return message;
}

/** Asks every subscriber of a query channel in this realm; returns the message they filled. */
export function ask<M extends { readonly version: number }>(channel: (typeof channels)[keyof typeof channels], message: M): M {
  return channel.hasSubscribers ? publish(channel, message) : message;
}
