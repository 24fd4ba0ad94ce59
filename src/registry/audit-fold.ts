/**
 * Folds one registry's audit events into its registrations and its own problems, and the plugins'
 * registration windows into what they add to a report. Pure: the same events always give the same
 * fold, whichever copy of the package folds them (the exit audit folds every registry in the thread).
 */
import type { WindowFact } from "../channel.js";
import type { AuditEvent, OutsideRecord, PluginModuleRecord, Problem, ProblemKind, RegistrationRecord } from "./audit-events.js";
import { didYouMean } from "./options.js";

export interface Fold {
  readonly records: Map<number, RegistrationRecord>;
  /** Tables provided to this registry, per backend. */
  readonly tables: Map<string, Set<number>>;
  readonly sealed: Map<string, boolean>;
  /** Backend → op → who expects it. */
  readonly expected: Map<string, Map<string, string>>;
  /** Problems that need nothing but the events: failures, conflicts, stuck disposals, identity and table misses. */
  readonly problems: Problem[];
  /** The backend set whose registry this is, once it knows its backends: they are the backends with a table. */
  set: string | undefined;
  /** Whether its registry is of another namespace than the framework tables' (a backend set's): no loader serves it. */
  foreign: boolean;
  /** The log of a collected registry (kept-log.ts): what it applied counts toward an expectation only where no table can list its entries. */
  kept?: boolean;
}

export function getOrCreate<K, V>(map: { get(key: K): V | undefined; set(key: K, value: V): unknown }, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}

/** Events from another copy arrive as unknown data; anything without a known kind is skipped. `registry` names each record. */
export function fold(events: readonly unknown[], registry?: string): Fold {
  const records = new Map<number, { -readonly [K in keyof RegistrationRecord]: RegistrationRecord[K] }>();
  const out: Fold = { records, tables: new Map(), sealed: new Map(), expected: new Map(), problems: [], set: undefined, foreign: false };
  const stuck: Problem[] = [];
  for (const raw of events) {
    if (typeof raw !== "object" || raw === null) continue;
    const event = raw as AuditEvent;
    switch (event.kind) {
      case "requested":
        records.set(event.id, {
          id: event.id,
          backend: event.backend,
          op: event.op,
          state: "pending",
          site: event.site,
          origin: event.origin,
          tables: [],
          error: undefined,
        });
        break;
      case "applied": {
        const record = records.get(event.id);
        if (record === undefined) break;
        const entry = { table: event.table, module: event.module, outcome: "applied", mechanism: event.mechanism } as const;
        record.tables = [...record.tables.filter((t) => t.table !== event.table), entry];
        if (record.state !== "failed" && record.state !== "refused") record.state = "applied";
        break;
      }
      case "failed": {
        const record = records.get(event.id);
        if (record === undefined) break;
        record.tables = [
          ...record.tables.filter((t) => t.table !== event.table),
          { table: event.table, module: event.module, outcome: "failed" },
        ];
        record.state = "failed";
        record.error = event.error;
        break;
      }
      case "refused": {
        const record = event.id === undefined ? undefined : records.get(event.id);
        if (record === undefined) {
          if (event.code === "ERR_DISPATCH_CONFLICT") {
            out.problems.push({ kind: "conflict", backend: event.backend, op: event.op, id: undefined, message: event.message });
          }
          break;
        }
        if (event.table !== undefined) record.tables = [...record.tables, { table: event.table, module: undefined, outcome: "refused" }];
        if (record.state !== "failed") record.state = "refused";
        record.error = { name: "DispatchHookError", message: event.message, code: event.code };
        break;
      }
      case "restored": {
        const record = records.get(event.id);
        if (record !== undefined) {
          record.state = "pending";
          record.error = undefined;
        }
        break;
      }
      case "disposed":
      case "superseded": {
        const record = records.get(event.id);
        if (record === undefined) break;
        record.state = event.kind;
        record.tables = [];
        break;
      }
      case "stuck":
        stuck.push({
          kind: "stuck",
          backend: event.backend,
          op: event.op,
          id: event.id,
          message: `${event.op} on ${event.backend} (registration #${event.id}) was disposed, but the table${event.module ? ` of ${event.module}` : ""} refused to give its entry back (${event.error.message}): the implementation is still in the table.`,
        });
        break;
      case "identity":
        out.problems.push({ kind: "identity", backend: event.backend, op: event.op, id: event.id, message: event.message });
        break;
      case "unseen-table":
        out.problems.push({ kind: "table", backend: event.backend, op: event.op, id: undefined, message: event.message });
        break;
      case "provided":
        getOrCreate(out.tables, event.backend, () => new Set()).add(event.table);
        break;
      case "withdrawn":
        out.tables.get(event.backend)?.delete(event.table);
        // Its registrations are no longer in it: the report names the tables that hold them.
        for (const record of records.values()) {
          if (record.backend !== event.backend) continue;
          record.tables = record.tables.filter((t) => t.table !== event.table);
          // As the registry has it: in no table now, it waits for the next.
          if (record.state === "applied" && !record.tables.some((t) => t.outcome === "applied")) record.state = "pending";
        }
        break;
      case "rejected":
        out.problems.push({ kind: "table", backend: event.backend, op: "-", id: undefined, message: event.message });
        break;
      case "expected": {
        const ops = getOrCreate(out.expected, event.backend, () => new Map());
        for (const op of event.ops) ops.set(op, event.source);
        break;
      }
      case "expectation-withdrawn": {
        const ops = out.expected.get(event.backend);
        for (const op of event.ops) ops?.delete(op);
        if (ops?.size === 0) out.expected.delete(event.backend);
        break;
      }
      case "sealed":
        out.sealed.set(event.backend, event.sealed);
        break;
      case "backend-set":
        out.set = event.set;
        break;
      case "declaration":
        out.problems.push({
          kind: "declaration",
          backend: event.backend,
          op: "-",
          id: undefined,
          code: event.code,
          message: event.message,
        });
        break;
      case "overridden": {
        // Not a problem: behind a newer override, as a registration of the same registry is (superseded) once in no table.
        const record = records.get(event.id);
        if (record === undefined) break;
        record.tables = record.tables.filter((t) => t.table !== event.table);
        if (record.state === "applied" && !record.tables.some((t) => t.outcome === "applied")) record.state = "superseded";
        break;
      }
      case "displaced":
        out.problems.push({
          kind: "displaced",
          backend: event.backend,
          op: event.op,
          id: event.id,
          message:
            `${event.op} on ${event.backend} (registration #${event.id}) landed in the table${event.module ? ` of ${event.module}` : ""}, but the table no longer holds it: ` +
            `code outside dispatch-hook ${event.removed ? "removed the entry" : "replaced the entry with another implementation"}. ` +
            "A table's entries change through the registry only (register(…, { override: true }), a handle's dispose()), so that every change is audited.",
        });
        break;
      case "unresolved":
        out.problems.push({
          kind: "implementation",
          backend: event.backend,
          op: event.op,
          id: undefined,
          code: "ERR_DISPATCH_IMPL_LOAD",
          message: event.message,
        });
        break;
    }
  }
  out.problems.push(...stuck);
  if (registry !== undefined) for (const record of records.values()) record.registry = registry;
  return out;
}

/**
 * Why a registration of a backend set's registry waits, when its backend is not one the set declares
 * (a set's backends are declared, never loaded later); undefined when it is. In a thread's audit the
 * names carry the set's namespace after a space, which no backend name contains.
 */
export function undeclaredMessage(record: RegistrationRecord, f: Fold): string | undefined {
  if (f.set === undefined || (f.tables.get(record.backend)?.size ?? 0) > 0) return undefined;
  const bare = (backend: string) => backend.split(" ")[0] as string;
  const declared = [...f.tables].flatMap(([backend, ids]) => (ids.size > 0 ? [bare(backend)] : []));
  const site = record.site === "unknown" ? "" : ` (registered at ${record.site})`;
  return (
    `${record.op} on ${record.backend}${site} is still pending: ${bare(record.backend)} is not a backend of the set ${f.set}, ` +
    `which declares ${declared.length === 0 ? "none" : declared.join(", ")}${didYouMean(bare(record.backend), declared)}. ` +
    "A set's backends are declared (set.declare() or a package.json), not loaded later: correct the name, or declare the backend."
  );
}

/** Each plugin's registration module and how it loaded, the entries it wrote into a table directly, and their problems. */
export function windowRecords(facts: { readonly windows: readonly WindowFact[] }): {
  plugins: PluginModuleRecord[];
  outside: OutsideRecord[];
  problems: Problem[];
} {
  const plugins: PluginModuleRecord[] = [];
  const outside: OutsideRecord[] = [];
  const problems: Problem[] = [];
  const seen = new Set<string>();
  for (const { info, state, outside: writes, error } of facts.windows) {
    if (seen.has(info.id)) continue;
    seen.add(info.id);
    const where = `${info.plugin}'s registration module for ${info.backend} (${info.module})`;
    const problem = (kind: ProblemKind, op: string, message: string) =>
      problems.push({ kind, backend: info.backend, op, id: undefined, message });
    plugins.push({
      plugin: info.plugin,
      backend: info.backend,
      module: info.module,
      for: info.url,
      state: state === "done" ? "loaded" : state === "open" || state === "awaiting" ? "loading" : state,
      error,
    });
    if (state === "missing") {
      problem("failed", "-", `${where} could not be loaded: ${error?.message ?? "unknown error"}. The backend loaded without it.`);
    } else if (state === "failed" || state === "awaiting") {
      problem(
        "failed",
        "-",
        error === undefined
          ? `${where} did not finish evaluating: it threw (the error reached whoever imported ${info.url}), it is still waiting at a top-level await, or another registration module of that dispatch module threw after an await (which stops every one whose own import cycle through the dispatch module had not finished).`
          : `${where} threw: ${error.message}`,
      );
    }
    for (const { op, replaced } of writes) {
      outside.push({ backend: info.backend, op, plugin: info.plugin, module: info.module, table: info.url, replaced });
      if (replaced) {
        problem(
          "conflict",
          op,
          `${where} replaced the ${info.backend} table's entry for ${op} directly, outside the registry. Register through dispatch-hook (register(…, { override: true })) so the replacement is audited and can be undone.`,
        );
      }
    }
  }
  return { plugins, outside, problems };
}
