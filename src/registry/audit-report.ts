/** Folded registries and what the thread knows (tables, loaders, plugins' windows) as one report: verify()'s and the exit audit's. Pure. */
import type { HostFacts, InstallationStatus, PluginStatus, WindowFact } from "../channel.js";
import type { AuditReport, BackendRecord, Problem, ProblemKind, RegistrationRecord } from "./audit-events.js";
import { type Fold, getOrCreate, undeclaredMessage, windowRecords } from "./audit-fold.js";
import { notes } from "./audit-notes.js";
import { hostOf, pendingMessage, strayText } from "./pending-message.js";
import { replacedTables } from "./replaced-tables.js";
import { unwatchedTables } from "./unwatched-tables.js";

/** A table that exists in the thread, and the names of the op types it holds (when it can list them). */
export interface TableFact {
  readonly backend: string;
  readonly module: string | undefined;
  readonly names: ReadonlySet<string> | undefined;
  /** The host adapter whose facade announced the table, and what it knew of the backend's plugins. */
  readonly host?: HostFacts | undefined;
  /** What its dispatch module exports now (read from the module at each audit), not a table a registry was given. */
  readonly exported?: boolean;
}

export interface ThreadFacts {
  readonly tables: readonly TableFact[];
  readonly loaders: readonly InstallationStatus[];
  /** Host adapters known to be in the thread before any of their modules announced a table (dispatch-hook/vite's setup file). */
  readonly hosts?: readonly string[];
  /** The plugins a host adapter read from the project (dispatch-hook/vite gives them to each Vitest worker). */
  readonly hostPlugins?: readonly PluginStatus[];
  readonly windows: readonly WindowFact[];
  /** Copies of the package whose hub handshake was refused: what they registered is out of sight. */
  readonly refusals?: readonly string[];
  /** Backends the program named to assertComplete() in this thread. */
  readonly asserted?: ReadonlySet<string>;
  /** Dispatch modules whose declared export holds no table: no registration could land there. */
  /** Declared exports that modules lack; `hosted`: served by a host adapter, which tells no pattern from a named backend. */
  readonly unusable?: ReadonlyArray<{ readonly backend: string; readonly message: string; readonly hosted?: true }>;
  /** Dispatchers made with a backend that never reached dispatch-hook (nothing announced them, no registry was given them); `used`: the program looked up in or read one. */
  readonly unannounced?: ReadonlyArray<{ readonly backend: string; readonly name: string; readonly used?: boolean }>;
}

interface ReportScope {
  /** Whether the loaders' own facts count (expectations, plugins' modules, "nothing to watch"): not for an isolated registry. */
  readonly connected: boolean;
  readonly focus?: readonly string[] | undefined;
}

const live = new Set(["pending", "applied", "failed"]);

/** A problem of a backend ("-": of the thread), not of one op type. */
const general = (kind: ProblemKind, backend: string, message: string): Problem => ({ kind, backend, op: "-", id: undefined, message });

/** Asked of a backend that has not loaded (named to assertComplete()): its plugins' registration modules have not run yet. */
function notLoadedText(backend: string, loaded: ReadonlySet<string>, facts: ThreadFacts): string | undefined {
  if (loaded.has(backend)) return undefined;
  const plugins = facts.loaders.flatMap((l) => l.plugins ?? []).filter((p) => p.registrations[backend] !== undefined);
  const modules =
    plugins.length === 0
      ? ""
      : `, and the registration module${plugins.length === 1 ? "" : "s"} of ${plugins.map((p) => p.name).join(", ")} for it ${plugins.length === 1 ? "runs" : "run"} when it does`;
  return `the ${backend} backend has not loaded in this thread yet${modules}. Load its dispatch module before asking.`;
}

export function buildReport(folds: readonly Fold[], facts: ThreadFacts, scope: ReportScope): AuditReport {
  const focus = scope.focus === undefined ? undefined : new Set(scope.focus);
  const problems: Problem[] = [];
  const loaded = new Set(facts.tables.map((t) => t.backend));
  for (const f of folds) for (const [backend, ids] of f.tables) if (ids.size > 0) loaded.add(backend);
  const findings = facts.loaders.flatMap((l) => l.findings ?? []);
  // Why a backend's module loaded but gave no table: a loader's finding, or a declared export it lacks.
  const unusable = scope.connected ? (facts.unusable ?? []).filter((u) => !loaded.has(u.backend)) : [];
  const unsignalled = new Map<string, string>(unusable.map((u) => [u.backend, u.message]));
  for (const finding of findings) if (finding.problem === "unsignalled") unsignalled.set(finding.backend, finding.message);
  for (const message of facts.refusals ?? []) problems.push(general("loader", "-", message));
  // A backend is in play once a table of it exists, a loader saw why none signalled, or the caller named it.
  const stray = new Set((facts.unannounced ?? []).flatMap((d) => (d.used === false ? [] : [d.backend])));
  const inPlay = (backend: string) => loaded.has(backend) || unsignalled.has(backend) || stray.has(backend) || focus?.has(backend) === true;

  const registrations: RegistrationRecord[] = [];
  // Op types registered and live, or written into a table outside the registry, per backend; and those of collected
  // registries' logs, which cannot say whether their entries still stand (the tables that can list entries are asked).
  const registeredOps = new Map<string, Set<string>>();
  const keptOps = new Map<string, Set<string>>();
  // Registrations waiting on a backend their set does not declare: judged, so checked.
  const undeclaredBackend = new Set<RegistrationRecord>();
  for (const f of folds) {
    for (const record of f.records.values()) {
      registrations.push(record);
      if (live.has(record.state)) getOrCreate(f.kept ? keptOps : registeredOps, record.backend, () => new Set<string>()).add(record.op);
      const add = (kind: ProblemKind, message: string) =>
        problems.push({ kind, backend: record.backend, op: record.op, id: record.id, message });
      const undeclared = record.state === "pending" ? undeclaredMessage(record, f) : undefined;
      if (undeclared !== undefined) {
        add("pending", undeclared);
        undeclaredBackend.add(record);
      } else if (record.state === "pending") {
        // A backend named to assertComplete() in this thread holds the exit audit to it, caught or not.
        const asserted = scope.connected && facts.asserted?.has(record.backend) === true;
        if (inPlay(record.backend) || asserted)
          add("pending", pendingMessage(record, facts, loaded.has(record.backend), unsignalled.get(record.backend), asserted));
      } else if (record.state === "failed") {
        add(
          "failed",
          `${record.op} on ${record.backend} (registered at ${record.site}) failed to apply: ${record.error?.message ?? "unknown error"}`,
        );
      } else if (record.state === "refused") {
        // A conflict, or a sealed backend: either way it did not land, until restore() or dispose() takes it back.
        const from =
          record.origin === undefined ? "" : ` (a declarative registration of ${record.origin.plugin}, from ${record.origin.module})`;
        if (record.error?.code === "ERR_DISPATCH_CONFLICT") add("conflict", `${record.error.message}${from}`);
        else
          add(
            "failed",
            `${record.op} on ${record.backend} (registered at ${record.site}) was refused: ${record.error?.message ?? "unknown error"}${from}`,
          );
      }
    }
    problems.push(...f.problems);
    problems.push(...replacedTables(f, facts.tables));
  }

  problems.push(...withoutLoader(folds, facts, loaded, scope));
  // A module only a pattern named ("./backends/{backend}.js") may be a helper beside the dispatch modules (common.js):
  // its lack of the export is a problem where something wants that backend, or where the declaration names it.
  const named = new Set(facts.loaders.flatMap((l) => l.backends));
  const plugins = facts.loaders.flatMap((l) => l.plugins ?? []);
  const hosted = [...(facts.hostPlugins ?? []), ...facts.tables.flatMap((t) => t.host?.plugins ?? [])];
  const explained = (b: string) => unsignalled.has(b) || problems.some((p) => p.backend === b);
  if (scope.connected) problems.push(...unwatchedTables(facts, [...plugins, ...hosted], loaded, explained, registeredOps));
  const wanted = (b: string) =>
    named.has(b) ||
    registrations.some((r) => r.backend === b) ||
    folds.some((f) => f.expected.has(b)) ||
    plugins.some((p) => p.registrations[b] !== undefined || p.expects[b] !== undefined) ||
    facts.asserted?.has(b) === true;
  for (const u of scope.connected ? (facts.unusable ?? []) : [])
    if ((u.hosted === true || wanted(u.backend)) && !problems.some((p) => p.kind === "table" && p.backend === u.backend))
      problems.push(general("table", u.backend, u.message));

  // Declarations a host adapter could not read: once each, as the loader's are.
  if (scope.connected)
    for (const message of new Set(facts.tables.flatMap((t) => t.host?.problems ?? []))) problems.push(general("loader", "-", message));
  // What a loader could not see is a problem for the thread, and for a registry with registrations on that backend.
  for (const finding of findings) {
    if (!scope.connected && !registrations.some((r) => r.backend === finding.backend)) continue;
    problems.push(general("loader", finding.backend, finding.message));
  }
  // A loader that watches nothing is a problem while a registration waits, while plugins declare what it can never
  // serve, or when no table exists at all (not beside a framework's own tables, nor in a helper of another project: install.ts).
  const waiting = folds.some((f) => !f.foreign && [...f.records.values()].some((r) => r.state === "pending"));
  const tableless = loaded.size === 0;
  const used = (facts.unannounced ?? []).some((d) => d.used !== false);
  if (scope.connected) {
    for (const loader of facts.loaders) {
      // With backend sets declared in package.json (chosen per call), no table is no sign of a loader in the wrong place.
      const needed = waiting || (loader.plugins ?? []).length > 0 || (loader.outside === true ? used : tableless && !loader.sets?.length);
      if ((loader.declarations ?? []).length > 0 || !needed) continue;
      const files = loader.files ?? [];
      problems.push(
        general(
          "loader",
          "-",
          `the dispatch-hook loader (${loader.mode}) found no backend declaration, so it watches nothing. It started from ${loader.root ?? "?"} and read ${files.length === 0 ? "no file" : files.join(", ")}. ` +
            'Declare the backends in the framework\'s package.json ("dispatchHook": { "backends": … }), or check with npx dispatch-hook doctor from the app\'s directory.',
        ),
      );
    }
  }
  const windows = scope.connected ? windowRecords(facts) : { plugins: [], outside: [], problems: [] };
  problems.push(...windows.problems);
  // Entries plugins wrote into a table directly: unlike a registration, each is in one table only.
  const written = new Map<string, Set<string>>();
  for (const write of windows.outside) getOrCreate(written, write.backend, () => new Set<string>()).add(write.op);

  // Expectations are checked on backends that loaded, against what their tables hold, what was registered and what plugins wrote.
  const expected = new Map<string, Map<string, string>>();
  const expect = (backend: string, op: string, source: string) => {
    const ops = getOrCreate(expected, backend, () => new Map<string, string>());
    if (!ops.has(op)) ops.set(op, source);
  };
  for (const f of folds) for (const [backend, ops] of f.expected) for (const [op, source] of ops) expect(backend, op, source);
  if (scope.connected) {
    for (const loader of facts.loaders) {
      for (const plugin of loader.plugins ?? []) {
        for (const [backend, ops] of Object.entries(plugin.expects)) for (const op of ops) expect(backend, op, plugin.declaredIn);
      }
    }
    for (const table of facts.tables) {
      for (const plugin of table.host?.plugins ?? [])
        for (const op of plugin.expects[table.backend] ?? []) expect(table.backend, op, plugin.declaredIn);
    }
    for (const plugin of facts.hostPlugins ?? [])
      for (const [backend, ops] of Object.entries(plugin.expects)) for (const op of ops) expect(backend, op, plugin.declaredIn);
  }
  // A registration waiting for a backend that is not in play is no problem, and nothing was checked of it.
  const unchecked = (r: RegistrationRecord) =>
    r.state === "disposed" ||
    (r.state === "pending" &&
      !inPlay(r.backend) &&
      !undeclaredBackend.has(r) &&
      !(scope.connected && facts.asserted?.has(r.backend) === true));
  let checked = registrations.filter((r) => !unchecked(r)).length + windows.outside.length;
  for (const [backend, ops] of expected) {
    if (!inPlay(backend)) continue;
    // Tables that can list their entries are each asked: a registration reaches every table of its
    // backend (and says so itself when it does not), an entry written directly reaches one.
    const listed = facts.tables.filter((t) => t.backend === backend && t.names !== undefined);
    for (const [op, source] of ops) {
      checked++;
      if (registeredOps.get(backend)?.has(op) || (listed.length === 0 && keptOps.get(backend)?.has(op))) continue;
      const lacking = listed.filter((t) => t.names?.has(op) !== true);
      if (listed.length > 0 ? lacking.length === 0 : written.get(backend)?.has(op)) continue;
      const why = unsignalled.get(backend) ?? strayText(backend, facts) ?? notLoadedText(backend, loaded, facts);
      const partly = lacking.length < listed.length;
      const where = lacking.map((t) => t.module ?? "(a table with no module)").join(", ");
      problems.push({
        kind: "missing",
        backend,
        op,
        id: undefined,
        message: partly
          ? `${op} on ${backend} was expected (by ${source}), and ${listed.length - lacking.length} of the ${listed.length} ${backend} tables ${listed.length - lacking.length === 1 ? "holds" : "hold"} it, written there directly, but not the table of ${where}. ` +
            `An entry written into a table reaches that table only: register it with register(${JSON.stringify(backend)}, …) to reach every table of the backend.`
          : `${op} on ${backend} was expected (by ${source}) but never registered${why === undefined ? `, and no table of the backend holds it${where === "" ? "" : ` (${where})`}.` : `: ${why}`}`,
      });
    }
  }

  const filtered = focus === undefined ? problems : problems.filter((p) => focus.has(p.backend));
  const backends = backendRecords(folds, facts, loaded);
  return {
    ok: filtered.length === 0,
    checked,
    registrations,
    outside: windows.outside,
    plugins: windows.plugins,
    backends,
    problems: filtered,
    notes: notes(facts, backends, registrations.length, windows.outside.length, scope),
  };
}

function backendRecords(folds: readonly Fold[], facts: ThreadFacts, loaded: ReadonlySet<string>): BackendRecord[] {
  const names = new Set<string>(loaded);
  const sealed = new Set<string>();
  for (const f of folds) {
    for (const record of f.records.values()) names.add(record.backend);
    for (const backend of f.expected.keys()) names.add(backend);
    for (const [backend, on] of f.sealed) {
      names.add(backend);
      if (on) sealed.add(backend);
    }
  }
  for (const loader of facts.loaders) {
    for (const backend of loader.backends) if (backend !== "{backend}") names.add(backend);
    for (const plugin of loader.plugins ?? [])
      for (const backend of [...Object.keys(plugin.registrations), ...Object.keys(plugin.expects)]) names.add(backend);
  }
  return [...names].sort().map((backend) => ({
    backend,
    tables: facts.tables.filter((t) => t.backend === backend).length,
    loaded: loaded.has(backend),
    sealed: sealed.has(backend),
  }));
}

/**
 * Keeps "ok" from meaning "nothing was looked at": backends the program needs (named to verify() or
 * assertComplete(), or expected) with no table, where no loader or host adapter could serve them.
 * With a loader such a backend is "not loaded" instead. Registrations alone say nothing: a plugin
 * registers for every backend it supports, whether or not the app uses it.
 */
function withoutLoader(folds: readonly Fold[], facts: ThreadFacts, loaded: ReadonlySet<string>, scope: ReportScope): Problem[] {
  if (facts.loaders.length > 0 || hostOf(facts) !== undefined) return [];
  const declared = new Map<string, string>();
  const declare = (backend: string, how: string) => {
    if (!declared.has(backend)) declared.set(backend, how);
  };
  for (const backend of scope.focus ?? []) declare(backend, "named to verify() or assertComplete()");
  if (scope.connected) for (const backend of facts.asserted ?? []) declare(backend, "named to assertComplete()");
  for (const f of folds) {
    for (const [backend, ops] of f.expected) {
      const [source] = ops.values();
      declare(backend, `expected to hold ${[...ops.keys()].join(", ")} (by ${source})`);
    }
  }
  return [...declared].flatMap(([backend, how]) =>
    loaded.has(backend)
      ? []
      : general(
          "no-loader",
          backend,
          `${backend} was ${how}, but no dispatch-hook loader is installed in this thread, no host adapter's module announced a table, and no ${backend} table reached dispatch-hook, so nothing could make its registrations land or check them. ` +
            `Start the program with node --import dispatch-hook/loader.mjs, run it through a host adapter (dispatch-hook/vitest, dispatch-hook/vite, dispatch-hook/esbuild or dispatch-hook/jest), or have the framework call announce(${JSON.stringify(backend)}, table) in its ${backend} dispatch module.`,
        ),
  );
}
