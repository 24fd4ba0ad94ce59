import { DispatchHookError } from "./errors.js";

// process.getBuiltinModule, not `import`: building the ES module facade of a builtin costs
// start-up time (node:fs alone about 3 ms), and the loader runs at the start of every process.
const { relative } = process.getBuiltinModule("node:path");
const { fileURLToPath } = process.getBuiltinModule("node:url");

/** How an application reached its table. */
export type Mechanism =
  /** The registration waited, and a loader hook signalled the dispatch module. */
  | "hook"
  /** The registration waited, and the framework called provide() itself. */
  | "native"
  /** The table already existed when the registration was made. */
  | "immediate";

export type RegistrationState = "pending" | "applied" | "failed" | "disposed" | "superseded" | "refused";

export interface ErrorSummary {
  readonly name: string;
  readonly message: string;
  readonly code: string | undefined;
}

/** One step in a registration's (or a table's) life. Plain data: `JSON.stringify` gives it whole. */
export type AuditEvent =
  | {
      readonly kind: "requested";
      readonly seq: number;
      readonly id: number;
      readonly backend: string;
      readonly op: string;
      readonly site: string;
    }
  | {
      readonly kind: "applied";
      readonly seq: number;
      readonly id: number;
      readonly backend: string;
      readonly op: string;
      readonly table: number;
      readonly module: string | undefined;
      readonly mechanism: Mechanism;
    }
  | {
      readonly kind: "failed";
      readonly seq: number;
      readonly id: number;
      readonly backend: string;
      readonly op: string;
      readonly table: number;
      readonly module: string | undefined;
      readonly error: ErrorSummary;
    }
  | {
      readonly kind: "disposed";
      readonly seq: number;
      readonly id: number;
      readonly backend: string;
      readonly op: string;
      readonly reason: "handle" | "restore" | "registry";
    }
  | { readonly kind: "restored"; readonly seq: number; readonly id: number; readonly backend: string; readonly op: string }
  | {
      readonly kind: "superseded";
      readonly seq: number;
      readonly id: number;
      readonly backend: string;
      readonly op: string;
      readonly by: number;
    }
  | {
      readonly kind: "refused";
      readonly seq: number;
      /** Set when an accepted registration was refused by one table (a conflict found at apply time). */
      readonly id: number | undefined;
      readonly backend: string;
      readonly op: string;
      readonly code: string;
      readonly message: string;
      readonly table: number | undefined;
    }
  | {
      readonly kind: "provided";
      readonly seq: number;
      readonly backend: string;
      readonly table: number;
      readonly tableKind: string;
      readonly module: string | undefined;
      readonly mechanism: Exclude<Mechanism, "immediate">;
    }
  | {
      /** A loader signalled a module, but its export is not a table the registry can use. */
      readonly kind: "rejected";
      readonly seq: number;
      readonly backend: string;
      readonly module: string | undefined;
      readonly message: string;
    }
  | {
      /** What a loader knows and the registry cannot: a module it could not see or instrument. */
      readonly kind: "loader";
      readonly seq: number;
      readonly backend: string;
      readonly module: string;
      readonly problem: "unsignalled" | "instrument-failed";
      readonly message: string;
    }
  | { readonly kind: "withdrawn"; readonly seq: number; readonly backend: string; readonly table: number }
  | { readonly kind: "expected"; readonly seq: number; readonly backend: string; readonly ops: readonly string[]; readonly source: string }
  | { readonly kind: "sealed"; readonly seq: number; readonly backend: string; readonly sealed: boolean };

export type AuditEventKind = AuditEvent["kind"];
type Unsequenced<E> = E extends AuditEvent ? Omit<E, "seq"> & { seq?: number } : never;

export interface RegistrationRecord {
  readonly id: number;
  readonly backend: string;
  readonly op: string;
  readonly state: RegistrationState;
  readonly site: string;
  /** One entry per table it reached (several providers give several). */
  readonly tables: ReadonlyArray<{
    readonly table: number;
    readonly module: string | undefined;
    readonly outcome: "applied" | "failed" | "refused";
    readonly mechanism?: Mechanism;
  }>;
  readonly error: ErrorSummary | undefined;
}

export type ProblemKind = "pending" | "failed" | "conflict" | "missing" | "table" | "loader";

export interface Problem {
  readonly kind: ProblemKind;
  readonly backend: string;
  readonly op: string;
  readonly id: number | undefined;
  readonly message: string;
}

export interface AuditReport {
  readonly ok: boolean;
  readonly registrations: readonly RegistrationRecord[];
  readonly backends: ReadonlyArray<{ readonly backend: string; readonly tables: number; readonly sealed: boolean }>;
  readonly problems: readonly Problem[];
}

export interface VerifyOptions {
  /**
   * Backends the caller is about to use. A registration still pending on one of these is a
   * problem even if its table was never provided.
   */
  readonly backends?: readonly string[];
}

export function summarizeError(error: unknown): ErrorSummary {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { name: error.name, message: error.message, code: typeof code === "string" ? code : undefined };
  }
  return { name: "non-error", message: String(error), code: undefined };
}

interface MutableRecord {
  id: number;
  backend: string;
  op: string;
  state: RegistrationState;
  site: string;
  tables: Array<{ table: number; module: string | undefined; outcome: "applied" | "failed" | "refused"; mechanism?: Mechanism }>;
  error: ErrorSummary | undefined;
}

/**
 * The life of every registration, as events. The log is the record the framework, a test or a
 * person reads to confirm that registrations landed; `verify()` folds it into a report.
 */
export class AuditLog {
  readonly #events: AuditEvent[] = [];

  /** Appends an event; the log numbers it. */
  record(event: Unsequenced<AuditEvent>): void {
    const sequenced = event as unknown as { seq: number };
    sequenced.seq = this.#events.length;
    this.#events.push(sequenced as unknown as AuditEvent);
  }

  get size(): number {
    return this.#events.length;
  }

  /** The events so far, oldest first. */
  events(): readonly AuditEvent[] {
    return this.#events.slice();
  }

  /** Folds the events into one record per registration, plus the problems. */
  verify(options: VerifyOptions = {}): AuditReport {
    const records = new Map<number, MutableRecord>();
    const tables = new Map<string, Set<number>>();
    const sealed = new Map<string, boolean>();
    const expected = new Map<string, Map<string, string>>();
    const refusedAtEntry: Problem[] = [];
    const other: Problem[] = [];
    const unseen = new Map<string, string>();

    for (const event of this.#events) {
      switch (event.kind) {
        case "requested":
          records.set(event.id, {
            id: event.id,
            backend: event.backend,
            op: event.op,
            state: "pending",
            site: event.site,
            tables: [],
            error: undefined,
          });
          break;
        case "applied": {
          const record = records.get(event.id);
          if (record === undefined) break;
          record.tables = record.tables.filter((t) => t.table !== event.table);
          record.tables.push({ table: event.table, module: event.module, outcome: "applied", mechanism: event.mechanism });
          if (record.state !== "failed" && record.state !== "refused") record.state = "applied";
          break;
        }
        case "failed": {
          const record = records.get(event.id);
          if (record === undefined) break;
          record.tables = record.tables.filter((t) => t.table !== event.table);
          record.tables.push({ table: event.table, module: event.module, outcome: "failed" });
          record.state = "failed";
          record.error = event.error;
          break;
        }
        case "refused": {
          const record = event.id === undefined ? undefined : records.get(event.id);
          if (record === undefined) {
            if (event.code === "ERR_DISPATCH_CONFLICT") {
              refusedAtEntry.push({ kind: "conflict", backend: event.backend, op: event.op, id: undefined, message: event.message });
            }
            break;
          }
          if (event.table !== undefined) record.tables.push({ table: event.table, module: undefined, outcome: "refused" });
          if (record.state !== "failed") record.state = "refused";
          record.error = { name: "DispatchHookError", message: event.message, code: event.code };
          break;
        }
        case "restored": {
          const record = records.get(event.id);
          if (record !== undefined) record.state = "pending";
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
        case "provided":
          getOrCreate(tables, event.backend, () => new Set()).add(event.table);
          break;
        case "withdrawn":
          tables.get(event.backend)?.delete(event.table);
          break;
        case "rejected":
          other.push({ kind: "table", backend: event.backend, op: "-", id: undefined, message: event.message });
          break;
        case "loader":
          if (event.problem === "unsignalled") unseen.set(event.backend, event.message);
          else other.push({ kind: "loader", backend: event.backend, op: "-", id: undefined, message: event.message });
          break;
        case "expected": {
          const ops = getOrCreate(expected, event.backend, () => new Map());
          for (const op of event.ops) ops.set(op, event.source);
          break;
        }
        case "sealed":
          sealed.set(event.backend, event.sealed);
          break;
      }
    }
    // A superseded registration that came back (its replacement was disposed) has an `applied`
    // event after the `superseded` one, so the fold above already shows it as applied again.
    const focus = options.backends === undefined ? undefined : new Set(options.backends);
    const problems: Problem[] = [];
    const live = new Map<string, Set<string>>();
    for (const record of records.values()) {
      if (record.state === "pending" || record.state === "applied" || record.state === "failed") {
        getOrCreate(live, record.backend, () => new Set()).add(record.op);
      }
      const provided = (tables.get(record.backend)?.size ?? 0) > 0;
      const loaderSaw = unseen.get(record.backend);
      if (record.state === "pending" && loaderSaw !== undefined && !provided) {
        problems.push({
          kind: "pending",
          backend: record.backend,
          op: record.op,
          id: record.id,
          message: `${record.op} on ${record.backend} (registered at ${record.site}) is still pending: ${loaderSaw}`,
        });
      } else if (record.state === "pending" && (provided || focus?.has(record.backend))) {
        problems.push({
          kind: "pending",
          backend: record.backend,
          op: record.op,
          id: record.id,
          message: provided
            ? `${record.op} on ${record.backend} (registered at ${record.site}) is still pending although the ${record.backend} table was provided.`
            : `${record.op} on ${record.backend} (registered at ${record.site}) is still pending: no ${record.backend} table was ever provided. Is the loader installed (node --import dispatch-hook/loader.mjs), or does the framework call provide()?`,
        });
      } else if (record.state === "failed") {
        problems.push({
          kind: "failed",
          backend: record.backend,
          op: record.op,
          id: record.id,
          message: `${record.op} on ${record.backend} (registered at ${record.site}) failed to apply: ${record.error?.message ?? "unknown error"}`,
        });
      } else if (record.state === "refused" && record.error?.code === "ERR_DISPATCH_CONFLICT") {
        problems.push({ kind: "conflict", backend: record.backend, op: record.op, id: record.id, message: record.error.message });
      }
    }
    problems.push(...refusedAtEntry, ...other);
    for (const [backend, ops] of expected) {
      // A lazy backend that never loaded misses nothing yet, unless the caller names it.
      const loaded = (tables.get(backend)?.size ?? 0) > 0 || unseen.has(backend) || focus?.has(backend) === true;
      if (!loaded) continue;
      for (const [op, source] of ops) {
        if (!live.get(backend)?.has(op)) {
          problems.push({
            kind: "missing",
            backend,
            op,
            id: undefined,
            message: `${op} on ${backend} was expected (by ${source}) but never registered${unseen.has(backend) ? `: ${unseen.get(backend)}` : "."}`,
          });
        }
      }
    }
    const filtered = focus === undefined ? problems : problems.filter((p) => focus.has(p.backend));
    const backends = [...new Set([...tables.keys(), ...sealed.keys(), ...[...records.values()].map((r) => r.backend)])]
      .sort()
      .map((backend) => ({ backend, tables: tables.get(backend)?.size ?? 0, sealed: sealed.get(backend) ?? false }));
    return { ok: filtered.length === 0, registrations: [...records.values()], backends, problems: filtered };
  }

  /** Throws one ERR_DISPATCH_INCOMPLETE error that lists every problem, if there is any. */
  assertComplete(options: VerifyOptions = {}): void {
    const report = this.verify(options);
    if (report.ok) return;
    const scope = options.backends === undefined ? "" : ` for ${options.backends.join(", ")}`;
    const lines = report.problems.map((p) => `  - [${p.kind}] ${p.message}`);
    throw new DispatchHookError(
      "ERR_DISPATCH_INCOMPLETE",
      `${report.problems.length} registration problem${report.problems.length === 1 ? "" : "s"}${scope}:\n${lines.join("\n")}`,
      { details: { problems: report.problems } },
    );
  }

  /** The log as JSON Lines: one event per line. */
  toJSON(): string {
    return this.#events.map((event) => JSON.stringify(event)).join("\n");
  }

  /** An aligned table, one row per registration, then the problems. */
  format(options: VerifyOptions = {}): string {
    const report = this.verify(options);
    const header = ["id", "backend", "op", "state", "via", "site", "module"];
    const rows = report.registrations.map((r) => [
      String(r.id),
      r.backend,
      r.op,
      r.state,
      [...new Set(r.tables.map((t) => t.mechanism ?? t.outcome))].join(",") || "-",
      r.site,
      [...new Set(r.tables.map((t) => (t.module === undefined ? `table #${t.table}` : shortModule(t.module))))].join(", ") || "-",
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
    const line = (cells: readonly string[]) =>
      cells
        .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] as number)))
        .join("  ")
        .trimEnd();
    const out = [line(header), ...rows.map(line)];
    if (rows.length === 0) out.push("(no registrations)");
    out.push(report.ok ? "ok: every registration landed" : `${report.problems.length} problem(s):`);
    for (const problem of report.problems) out.push(`  [${problem.kind}] ${problem.message}`);
    return out.join("\n");
  }
}

/** A module URL as people read it: a path relative to the working directory when that is shorter. */
function shortModule(url: string): string {
  if (!url.startsWith("file:")) return url;
  try {
    const path = fileURLToPath(url);
    const rel = relative(process.cwd(), path);
    const query = url.slice(url.search(/[?#]|$/));
    return `${rel.length < path.length ? rel : path}${query}`;
  } catch {
    return url;
  }
}

function getOrCreate<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}
