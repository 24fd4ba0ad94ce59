/**
 * The audit of a whole thread: every registry of every installed copy of dispatch-hook, folded with
 * one fold, and the thread's facts read from the hub at the moment of asking (nothing is cached, so a
 * fact that stopped being true is gone). A registry's own verify() answers only for itself (registryReport).
 */
import { url } from "../builtins.js";
import { frameworkNamespace, type HostFacts, type HubMember } from "../channel.js";
import { hostAdapters, hostPlugins } from "../host-adapters.js";
import { hub } from "../hub.js";
import { exportOf, keyName, listEntries, noticeTable } from "../table-reads.js";
import { type AuditEvent, type AuditReport, frozen, signalChange, toData, type VerifyOptions } from "./audit-events.js";
import { type Fold, fold } from "./audit-fold.js";
import { buildReport, type TableFact, type ThreadFacts } from "./audit-report.js";
import { backendDispatchers } from "./backend-dispatchers.js";
import { DispatchHookError } from "./errors.js";
import { checkVerifyOptions } from "./options.js";
import type { Table } from "./registration.js";

let created = 0;
const defaults = new WeakSet<object>();

/** How a registry is named in a thread-wide audit: the given name, or the next "#n". @internal */
export function registryName(given: string | undefined): string {
  return given ?? `#${++created}`;
}

/** The package directory of this copy of dispatch-hook ("?" if it cannot be told). @internal */
export const copyDirectory: string = (() => {
  try {
    return url.fileURLToPath(new URL("../..", import.meta.url));
  } catch {
    return "?";
  }
})();

/** @internal Marks a copy's default registry: with no loader installed, the one host adapters' facades feed. */
export function markDefault<T extends object>(registry: T): T {
  defaults.add(registry);
  return registry;
}

/** @internal */
export function isDefault(registry: object): boolean {
  return defaults.has(registry);
}

/**
 * The backends a program named to assertComplete() in this thread. Kept at the hub, so that the exit
 * audit of any copy holds the program to them even when it caught the error.
 */
function assertedBackends(): Set<string> {
  return hub().shared("asserted-backends@1", () => new Set<string>());
}

/** The thread's facts; `own` adds tables a registry was given directly (they were never announced). @internal */
/** `ownOnly`: a registry of another namespace (a backend set's) is told of its own tables only, under the names it gave them. */
export function gatherFacts(own: ReadonlyArray<Pick<Table, "backend" | "module" | "ref">> = [], ownOnly = false): ThreadFacts {
  const seen = new Set<unknown>();
  const tables: TableFact[] = [];
  const add = (backend: string, module: string | undefined, table: unknown, host?: HostFacts, exported?: true) => {
    if ((typeof table !== "object" && typeof table !== "function") || table === null || seen.has(table)) return;
    seen.add(table);
    const keys = listEntries(table)?.keys();
    const names = keys && new Set([...keys].flatMap((key) => keyName(key) ?? []));
    tables.push({ backend, module, names, host, ...(exported && { exported }) });
  };
  const h = hub();
  const unusable: Array<{ backend: string; message: string; hosted?: true }> = [];
  // A table of another namespace (a backend set's) is named with it, apart from a framework's of the same name.
  for (const notice of ownOnly ? [] : h.allTables()) {
    const backend = inNamespaceName(notice.backend, notice.namespace);
    const table = noticeTable(notice);
    if (notice.via === "hook") add(backend, notice.module, table, notice.host, true);
    else add(backend, notice.module, table);
    if (notice.via === "hook" && table === undefined) {
      const missing = missingExport(notice.exports, notice.exportName);
      if (missing !== undefined)
        unusable.push({
          backend,
          message: `${notice.module} was loaded as backend ${backend}'s dispatch module, but ${missing}`,
          ...(notice.host === undefined ? {} : { hosted: true as const }),
        });
    }
  }
  for (const t of own) {
    const table = t.ref.deref();
    if (table !== undefined) add(t.backend, t.module, table);
  }
  return {
    tables,
    loaders: h.loaders(),
    hosts: [...hostAdapters()],
    hostPlugins: hostPlugins(),
    windows: h.windows(),
    refusals: h.refusals(),
    asserted: assertedBackends(),
    unannounced: ownOnly ? [] : unannounced(seen),
    unusable,
  };
}

/**
 * Why a declaration's export is not in its module (a typo: no registration could ever land), or
 * undefined. An export that exists and is still undefined may be a table made later (`export let table`).
 */
export function missingExport(exports: unknown, name: string): string | undefined {
  try {
    if (typeof exports !== "object" || exports === null || name in exports || exportOf(exports, name) !== undefined) return undefined;
    const has = Object.keys(exports).join(", ") || "none";
    return `it has no export ${JSON.stringify(name)} (its exports: ${has}). Correct "export" in the declaration.`;
  } catch {
    return undefined; // a namespace that cannot be read (an export * of a module that threw): its error says more
  }
}

/** Dispatchers made with a backend that never reached dispatch-hook, and whether the program used each. @internal */
export function unannounced(
  seen: ReadonlySet<unknown> = announcedTables(),
): Array<{ backend: string; name: string; used: boolean; ops: string[]; exported: boolean }> {
  const used = new Set(backendDispatchers().live(true));
  // What the watched modules export besides their declared tables (a second Dispatcher in the declared module): read
  // only for a Dispatcher used and never announced, which is rare, not on every audit of a thousand module instances.
  let exported: Set<unknown> | undefined;
  const exports = (): Set<unknown> => {
    if (exported !== undefined) return exported;
    exported = new Set();
    for (const notice of hub().allTables()) {
      if (notice.via !== "hook") continue;
      try {
        for (const value of Object.values(notice.exports as object)) exported.add(value);
      } catch {} // a namespace with an export still in its temporal dead zone
    }
    return exported;
  };
  return backendDispatchers()
    .live(false)
    .flatMap((d) => {
      const { backend, name } = d as { backend?: unknown; name?: unknown };
      if (seen.has(d) || typeof backend !== "string") return [];
      // The op types a used one holds, by name (a copy of a table may hold what the plugins registered). Reading an
      // unused one's entries would count as using it.
      const read = used.has(d) ? listEntries(d) : undefined;
      const ops = read === undefined ? [] : [...read.keys()].flatMap((k) => keyName(k) ?? []);
      return [{ backend, name: String(name), used: used.has(d), ops, exported: used.has(d) && exports().has(d) }];
    });
}

function announcedTables(): Set<unknown> {
  return new Set(
    hub()
      .allTables()
      .map((notice) => noticeTable(notice)),
  );
}

/** One fold per member with events, named with its copy where the thread has several. */
function foldMembers(members: readonly HubMember[]): Fold[] {
  const registries = members
    .map((m) => ({ m, events: inNamespace(m.events() as readonly AuditEvent[], m.namespace) }))
    .filter((r) => r.events.length > 0);
  const copies = new Set(registries.map((r) => r.m.copy));
  return registries.map(({ m, events }) => {
    const f = fold(events, copies.size > 1 ? `${m.name} (${m.copy})` : m.name);
    f.foreign = m.namespace !== frameworkNamespace;
    f.kept = m.kept === true;
    return f;
  });
}

export function threadAudit(options: VerifyOptions = {}): AuditReport {
  checkVerifyOptions(options, "threadAudit()", "shown");
  return frozen(buildReport(foldMembers(hub().members()), gatherFacts(), { connected: true, focus: options.backends }));
}

/** A backend of another namespace, as the audit names it: "wasm [ml-ops]" for a backend set's (as doctor does). */
function inNamespaceName(backend: string, namespace: string): string {
  if (namespace === frameworkNamespace) return backend;
  const set = /^backends(?:#(\d+))?:(.*)$/s.exec(namespace);
  return `${backend} [${set === null ? namespace : `${set[2]}${set[1] === undefined ? "" : `#${set[1]}`}`}]`;
}

/** A registry of another namespace (a backend set's) names its backends with it, apart from a framework's of the same name. */
function inNamespace(events: readonly AuditEvent[], namespace: string): readonly AuditEvent[] {
  if (namespace === frameworkNamespace) return events;
  return events.map((event) => {
    const data = toData(event);
    return "backend" in data ? { ...data, backend: inNamespaceName(data.backend, namespace) } : data;
  });
}

/**
 * One registry's report: its events, the thread's facts and the tables it was given. The loaders' facts
 * count for the registry a loader feeds, and, with no loader, for the default registry that host adapters feed.
 * @internal
 */
export function registryReport(
  registry: object,
  events: readonly AuditEvent[],
  options: VerifyOptions,
  own: readonly Table[],
  member?: HubMember,
): AuditReport {
  checkVerifyOptions(options, "verify() or format()");
  // A registry of another namespace (a backend set's) is told of its own tables only: a framework's are none of its business.
  const facts = gatherFacts(own, member !== undefined && member.namespace !== frameworkNamespace);
  if (isDefault(registry)) {
    // The default registry is one per copy (and per module format where Node 20.16 loads both), but
    // a program means one: its report folds every default registry of the thread, whichever copy a
    // plugin registered through. The loaders feed default registries, so their facts count.
    const defaults = hub()
      .members()
      .filter((m) => m.isDefault === true && m.namespace === frameworkNamespace);
    const folds = foldMembers(defaults);
    if (member === undefined || !defaults.includes(member)) folds.push(fold(events));
    return buildReport(folds, facts, { connected: true, focus: options.backends });
  }
  const connected = facts.loaders.some((l) => l.registry === registry);
  return buildReport([fold(events)], facts, { connected, focus: options.backends });
}

/**
 * assertComplete(): remembers the backends named, then throws one error listing every problem, if any:
 * ERR_DISPATCH_NO_LOADER when a needed backend has no table and nothing could make one signal, else
 * ERR_DISPATCH_INCOMPLETE. @internal
 */
export function throwIfIncomplete(read: (options: VerifyOptions) => AuditReport, options: VerifyOptions): void {
  checkVerifyOptions(options, "assertComplete()");
  for (const backend of options.backends ?? []) if (typeof backend === "string") assertedBackends().add(backend);
  signalChange();
  const report = read(options);
  // A named backend that has not loaded has had nothing checked: ok would say nothing of it.
  const unloaded = (options.backends ?? []).filter((b) => report.backends.find((r) => r.backend === b)?.loaded !== true);
  if (report.ok && unloaded.length === 0) return;
  if (report.ok) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INCOMPLETE",
      `${unloaded.join(", ")} ${unloaded.length === 1 ? "has" : "have"} not loaded in this thread yet, so nothing of ${unloaded.length === 1 ? "it" : "them"} could be checked: ` +
        "call assertComplete() once the backend's dispatch module has loaded (its plugins' registration modules run with it).",
      { details: { problems: [], backends: unloaded } },
    );
  }
  const scope = options.backends === undefined ? "" : ` for ${options.backends.join(", ")}`;
  const lines = report.problems.map((p) => `  - [${p.kind}] ${p.message}`);
  const list = `${report.problems.length} registration problem${report.problems.length === 1 ? "" : "s"}${scope}:\n${lines.join("\n")}`;
  const unserved = [...new Set(report.problems.flatMap((p) => (p.kind === "no-loader" ? [p.backend] : [])))];
  if (unserved.length > 0) {
    throw new DispatchHookError(
      "ERR_DISPATCH_NO_LOADER",
      `No table of ${unserved.join(", ")} reached dispatch-hook, and no dispatch-hook loader or host adapter is installed in this thread that could make one signal. ` +
        "Start the program with node --import dispatch-hook/loader.mjs, run it through a host adapter (dispatch-hook/vitest, dispatch-hook/vite, dispatch-hook/esbuild or dispatch-hook/jest), or have the framework call announce() in its dispatch modules.\n" +
        list,
      { details: { problems: report.problems } },
    );
  }
  throw new DispatchHookError("ERR_DISPATCH_INCOMPLETE", list, { details: { problems: report.problems } });
}

/**
 * A program means one default registry, whichever copy of the package (path, version, module format)
 * registered: the default registry's snapshot takes every other copy's default registry's with it,
 * and its restore() puts each back (one made since, as it was made), so that a test fixture undoes a
 * test's registrations made through any copy. Copies of older versions cannot be asked, and are not.
 */
const copiesOf = new WeakMap<object, Map<HubMember, unknown>>();
const otherDefaults = (member: HubMember) =>
  hub()
    .members()
    .filter((m) => m !== member && m.isDefault === true && m.namespace === frameworkNamespace && typeof m.restore === "function");

/** @internal */
export function withCopies<S extends object>(registry: object, member: HubMember, snapshot: S): S {
  if (isDefault(registry)) copiesOf.set(snapshot, new Map(otherDefaults(member).map((m) => [m, m.snapshot?.()])));
  return snapshot;
}

/** @internal */
export function restoreCopies(member: HubMember, snapshot: object): void {
  const then = copiesOf.get(snapshot);
  if (then !== undefined) for (const m of otherDefaults(member)) m.restore?.(then.get(m));
}
