/**
 * The wire contract: how every copy of dispatch-hook in a thread finds the thread's one hub (one
 * handshake on a diagnostics channel, then plain method calls, hub.ts), and the shapes that cross.
 * Versions: a hub answers a handshake that accepts a version it implements; a version only ever adds
 * fields and methods, else it refuses, with a warning. A hub answers only its own realm (vm context). */
import { diagnosticsChannel } from "./builtins.js";

/** Marks Dispatchers across copies of the package, where `instanceof` would fail. */
export const dispatcherBrand: unique symbol = Symbol.for("dispatch-hook.dispatcher");

export type ErrorSummary = { readonly name: string; readonly message: string; readonly code: string | undefined };

export function summarizeError(error: unknown): ErrorSummary {
  if (!(error instanceof Error)) return { name: "non-error", message: String(error), code: undefined };
  const code = (error as { code?: unknown }).code;
  return { name: error.name, message: error.message, code: typeof code === "string" ? code : undefined };
}

/** What a loader signal says about one evaluated dispatch module instance. */
export interface ModuleInfo {
  readonly url: string; // the exact URL of the module instance (query and hash included)
  readonly backend: string;
  readonly exportName: string; // the export that holds the backend's dispatch table
  readonly format: "module" | "commonjs";
  readonly host?: HostFacts; // set by a host adapter's facade (Vite, esbuild, Jest)
}

/** What a host adapter knew of a dispatch module's backend when it generated the facade. */
export interface HostFacts {
  readonly name: string; // "dispatch-hook/vite", "dispatch-hook/esbuild", "dispatch-hook/jest"
  readonly plugins: readonly PluginStatus[];
  readonly problems?: readonly string[]; // declarations it could not read, as the loader's "config" findings
}

/** The namespace of framework dispatch tables; other namespaces (a backend set's private registry) never meet them. */
export const frameworkNamespace = "dispatch";

/** A table that exists in this thread. */
export type TableNotice =
  | {
      readonly via: "hook";
      readonly namespace: string;
      readonly backend: string;
      readonly module: string;
      /** The module namespace (ESM) or `module.exports` (CommonJS) that holds the table. */
      readonly exports: unknown;
      readonly exportName: string;
      readonly host?: HostFacts | undefined;
    }
  | {
      readonly via: "native";
      readonly namespace: string;
      readonly backend: string;
      readonly module: string | undefined;
      readonly table: unknown;
    };

/** Told to registries and loaders by a Dispatcher before it throws a miss. */
export interface DispatchMiss {
  readonly table: object;
  readonly name: string;
  readonly backend: string | undefined;
  readonly chain: readonly Function[]; // the received type and its ancestors, nearest first
  readonly hints: string[]; // why it missed: registries, a line per registration of the missed type; loaders, their findings on the backend
  readonly context: string[]; // loaders append what they know about the backend
}

/** Something a loader installation could not see or do. */
export interface LoaderFinding {
  readonly backend: string;
  readonly module: string;
  readonly problem: "unsignalled" | "instrument-failed" | "config" | "late-plugin"; // config: an unreadable declaration (backend "-", module: its file); late-plugin: a plugin learned after its backend loaded
  readonly message: string;
}

/** A plugin as a loader knows it from a `dispatchHook` declaration. */
export interface PluginStatus {
  readonly name: string;
  readonly declaredIn: string;
  readonly registrations: Readonly<Record<string, string>>; // backend → the registration module's URL
  readonly expects: Readonly<Record<string, readonly string[]>>;
}

/** What one loader installation says about itself. */
export interface InstallationStatus {
  readonly mode: string;
  readonly backends: readonly string[]; // named backends, and `{backend}` for a pattern
  readonly findings?: readonly LoaderFinding[];
  readonly registry?: object; // the registry the installation was connected to
  readonly files?: readonly string[]; // every package.json or config file it read
  readonly root?: string; // where discovery started: the entry point's package, or the working directory
  readonly declarations?: readonly string[]; // one line each: "numba (tensorlab: ./link/numba/dispatch/basic.js)"
  readonly sets?: readonly string[]; // backends of backend sets it read (chosen per call, never watched): "wasm [ml-ops] (mlkit-wasm)"
  readonly plugins?: readonly PluginStatus[];
  readonly outside?: boolean; // its project is not the one of the first process of its tree that ran the loader
}

export interface HubLoader {
  status(): InstallationStatus;
  miss(miss: DispatchMiss): void;
  /** A registration module has finished in a window: later instances of its dispatch module need none. */
  ran?(registrationModule: string): void;
  /** A watched module's table, which signalled, is gone (collected, or replaced by a newer one of the module): it did finish evaluating. */
  signalled?(module: string): void;
}

/** A window: one plugin's registration module evaluating for one dispatch module instance; what it registers is the plugin's. */
export interface WindowInfo {
  readonly id: string; // unique per dispatch module instance and registration module
  readonly url: string; // the dispatch module instance whose backend loaded
  readonly backend: string;
  readonly plugin: string;
  readonly module: string; // the registration module's URL
}

/** An entry a registration module wrote into the table directly, not through a registry. */
export interface OutsideWrite {
  readonly op: string;
  readonly opType: Function | string; // the entry's key: an op type, or an op's name in a table keyed by name
  readonly replaced: boolean; // it replaced an entry that was there before the module ran
}

/** "open": running its synchronous part; "awaiting": suspended at a top-level await. */
export type WindowState = "open" | "awaiting" | "done" | "missing" | "failed";

/** What the hub keeps of a window, for as long as its table lives. The runtime that opened it updates it. */
export interface WindowFact {
  readonly info: WindowInfo;
  state: WindowState;
  outside: readonly OutsideWrite[];
  error: ErrorSummary | undefined;
}

/** A registry, as the hub knows it. The hub holds it weakly, and strongly while `hold(member, true)`. */
export interface HubMember {
  readonly namespace: string;
  readonly name: string; // "default", given, or "#n"
  readonly copy: string; // the package directory of the copy it belongs to
  table(notice: TableNotice): void; // a table of a backend it listens to appeared in its namespace
  miss(miss: DispatchMiss): void;
  wrote(table: object, key: Function | string, impl: unknown): unknown; // did it write exactly this entry? (truthy: yes, the registration where it can say)
  events(): readonly unknown[]; // its audit events, as plain data
  readonly isDefault?: boolean; // a copy's default registry: each one's report folds them all
  readonly kept?: boolean; // the log of a registry that was collected: its registrations can no longer say whether they stand
  snapshot?(): unknown; // what it holds, for restore(): a test fixture undoes a test's registrations in every copy (not in older copies)
  restore?(snapshot: unknown): void; // back to a snapshot; undefined: as it was made
}

/** The hub's API, version 1. Every method is cheap in what the thread holds: it costs what it touches. */
export interface HubApi {
  readonly versions: readonly number[];
  /** A table exists: a watched module finished evaluating, or a framework called announce(). */
  announce(notice: TableNotice): void;
  allTables(): TableNotice[]; // every live table of every namespace
  join(member: HubMember): void;
  /** From now on the member hears every table of `backend` in its namespace; returns those that exist. */
  listen(member: HubMember, backend: string): TableNotice[];
  /** Strongly while it holds work that has not landed, weakly otherwise. */
  hold(member: HubMember, strong: boolean): void;
  leave(member: HubMember): void;
  members(): HubMember[];
  addLoader(loader: HubLoader): () => void;
  loaders(): InstallationStatus[];
  hasLoader(): boolean;
  /** A Dispatcher missed: registries of the backend and the loaders say why. */
  miss(miss: DispatchMiss): void;
  wrote(table: object, key: Function | string, impl: unknown, backend: string): unknown; // did any registry write exactly this entry? (as above)
  /** Records a window, held while `table` lives; it becomes the current window when `enter` is set. */
  openWindow(fact: WindowFact, table: object | undefined, enter: boolean, hosted?: boolean): void;
  /** Makes `fact` (or no window) current for the code that runs next, and its async continuations; `hosted`: see step() in window.ts. */
  enterWindow(fact: WindowFact | undefined, hosted?: boolean): void;
  settleWindow(fact: WindowFact): void; // it left the open and awaiting states
  window(id: string): WindowFact | undefined;
  /** The window the running code belongs to, if it is open or awaiting. */
  currentWindow(): WindowInfo | undefined;
  windows(): WindowFact[];
  claimExit(): boolean; // true for the first caller only: the thread's exit audit is claimed
  /** A value every copy in the realm shares, created by the first to ask. */
  shared<T>(key: string, create: () => T): T;
  /** Notes a copy whose handshake it refused: that copy's registrations cannot be audited here. */
  refuse(note: string): void;
  refusals(): string[];
}

/** The handshake: published once per copy and realm, answered by the hub of that realm. */
export interface HubRequest {
  readonly kind: "dispatch-hook:hub";
  readonly version: number; // the newest hub API version the asker knows
  readonly accepts: readonly number[]; // every version the asker can use
  readonly realm: object;
  hub?: HubApi;
  refused?: string; // set by a hub that refuses: why, so that the asker's own audit says so too
  hosts?: string[]; // set by hubs of other realms: host adapters serving the thread (a Jest resolver serves its tests' vm realm)
}
export const hostsKey = "host-adapters@1"; // hub.shared(): host adapters serving the realm before any of their modules loaded
export const logChangesKey = "log-changes@1"; // hub.shared(): what a change calls (the hub's tables and windows, every log)

export const hubChannelName = "dispatch-hook:hub";
export const hubVersion = 1;
const hubAccepts: readonly number[] = [hubVersion];
const channel = diagnosticsChannel.channel(hubChannelName);
let connected: HubApi | undefined;
const warned = new Set<string>();

function warnOnce(code: string, message: string): void {
  if (!warned.has(code)) process.emitWarning(message, { code });
  warned.add(code);
}

/** Every method a copy calls on the hub: an answer lacking one would fail later, in the middle of a registration. */
const hubMethods = (
  "announce allTables join listen hold leave members addLoader loaders hasLoader miss wrote openWindow enterWindow " +
  "settleWindow window currentWindow windows claimExit shared refuse refusals"
).split(" ") as ReadonlyArray<keyof HubApi>;

function isHub(value: unknown): value is HubApi {
  try {
    if (typeof value !== "object" || value === null) return false;
    const hub = value as Partial<HubApi>;
    const speaks = Array.isArray(hub.versions) && hub.versions.some((v) => hubAccepts.includes(v));
    return speaks && hubMethods.every((m) => typeof hub[m] === "function");
  } catch {
    return false; // a getter that throws: not ours
  }
}

function answer(message: unknown, hub: HubApi, realm: object): void {
  const request = message as Partial<HubRequest> | null;
  if (typeof request !== "object" || request === null || request.kind !== "dispatch-hook:hub" || !Array.isArray(request.accepts)) {
    warnOnce(
      "DISPATCH_HOOK_HUB_HANDSHAKE",
      `A message on the ${hubChannelName} channel is not a dispatch-hook hub handshake; it was ignored.`,
    );
    return;
  }
  if (request.realm !== realm) {
    const hosts = hub.shared<Set<string>>(hostsKey, () => new Set());
    if (hosts.size > 0) request.hosts = [...(request.hosts ?? []), ...hosts];
  }
  if (request.realm !== realm || request.hub !== undefined) return;
  if (!request.accepts.some((v) => hub.versions.includes(v))) {
    const note = `A copy of dispatch-hook that speaks hub version ${String(request.version)} (accepts ${JSON.stringify(request.accepts)}) asked for this thread's hub, which speaks ${JSON.stringify(hub.versions)}; it runs on a hub of its own, so its registries and tables do not meet this copy's, and this audit cannot see them. Install one version of dispatch-hook.`;
    hub.refuse(note);
    warnOnce("DISPATCH_HOOK_HUB_VERSION", note);
    request.refused = note;
    return;
  }
  request.hub = hub;
}

/** Another copy's hub may have answered before what overwrote the answer: this copy's audit says it may not see them all. */
const foreignHub =
  "An answer to this copy's hub handshake was not a dispatch-hook hub; this copy runs on a hub of its own, and other copies' registries and tables are not in its audit.";

/** This copy's answer to handshakes, kept while its realm lives (the relay below holds it weakly). */
let answering: ((message: unknown) => void) | undefined;

/**
 * What the channel holds for a hub: in the main realm, the answer itself; in a vm realm, whose every
 * function would keep the whole realm alive from the thread's channel, a main-realm relay that holds it weakly.
 */
function subscriber(answer: (message: unknown) => void): (message: unknown) => void {
  if (Object.getPrototypeOf(process.getBuiltinModule) === Function.prototype) return answer;
  const relay = process
    .getBuiltinModule("node:vm")
    .runInThisContext("(target) => { const ref = new WeakRef(target); return (message) => ref.deref()?.(message); }");
  return (relay as (target: unknown) => (message: unknown) => void)(answer);
}

/**
 * The hub of this thread and realm: found with one handshake, or made with `create`. Its subscription
 * is never ended (an unsubscribe during a publish skips the next subscriber on Node 20.16).
 */
export function connect(create: () => HubApi): HubApi {
  if (connected !== undefined) return connected;
  const request: HubRequest = { kind: "dispatch-hook:hub", version: hubVersion, accepts: hubAccepts, realm: globalThis };
  if (channel.hasSubscribers) channel.publish(request);
  const found = request.hub;
  if (found !== undefined && isHub(found)) {
    connected = found;
    return found;
  }
  if (found !== undefined) warnOnce("DISPATCH_HOOK_HUB_HANDSHAKE", foreignHub);
  const hub = create();
  for (const note of [request.refused, found && foreignHub]) if (typeof note === "string") hub.refuse(note);
  for (const host of request.hosts ?? []) hub.shared<Set<string>>(hostsKey, () => new Set()).add(host);
  answering = (message) => {
    // A message that cannot be read or written (frozen, a getter that throws) is ignored: a subscriber's throw would be
    // rethrown by diagnostics_channel as an uncaught exception, taking the app down.
    try {
      answer(message, hub, globalThis); // this module's realm: the hub's
    } catch {
      warnOnce("DISPATCH_HOOK_HUB_HANDSHAKE", `A message on the ${hubChannelName} channel could not be read or answered; it was ignored.`);
    }
  };
  channel.subscribe(subscriber(answering));
  connected = hub;
  return hub;
}
