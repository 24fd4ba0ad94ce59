/**
 * A registry's audit log: the life of every registration, as events. It is read-only: events come
 * from its registry, never from outside, so a report cannot be forged into saying "ok". The log
 * holds the events; the registry reads them (verify(), assertComplete(), format()), with what the
 * thread's loaders know.
 */
import { assertedBackends } from "./asserted-backends.js";
import type { AuditEvent, AuditReport, Unsequenced, VerifyOptions } from "./audit-events.js";
import { DispatchHookError } from "./errors.js";

export type { AuditEvent, AuditEventKind, AuditReport, VerifyOptions } from "./audit-events.js";

const token = Symbol("AuditLog");

function toData(event: AuditEvent): AuditEvent {
  const json = (event as { toJSON?: () => AuditEvent }).toJSON;
  return typeof json === "function" ? json.call(event) : { ...event };
}

export class AuditLog {
  readonly #events: AuditEvent[];

  /** @internal A registry creates its log with createAuditLog(); the log cannot be written from outside. */
  constructor(key: symbol, events: AuditEvent[]) {
    if (key !== token) {
      throw new DispatchHookError(
        "ERR_DISPATCH_INVALID_OPTION",
        "An AuditLog belongs to a registry and cannot be created on its own: read one through registry.audit.",
      );
    }
    this.#events = events;
  }

  get size(): number {
    return this.#events.length;
  }

  /** The events so far, oldest first, as plain data: a snapshot, read-only. */
  events(): AuditEvent[] {
    return frozen(this.#events.map(toData));
  }

  /** The events as data, so that `JSON.stringify({ audit })` nests them. */
  toJSON(): AuditEvent[] {
    return this.events();
  }

  /** The events as JSON Lines: one event per line. */
  toJSONLines(): string {
    return this.#events.map((event) => JSON.stringify(event)).join("\n");
  }
}

/**
 * Reads a registry's report for assertComplete() and throws one error that lists every problem, if
 * there is any: ERR_DISPATCH_NO_LOADER when a backend named here (or expected) has no table and
 * nothing in the thread could make one signal, else ERR_DISPATCH_INCOMPLETE. The thread remembers
 * the backends named first (assertedBackends()), so that its exit audit holds the program to them
 * too, even when it caught the error. @internal
 */
export function throwIfIncomplete(read: (options: VerifyOptions) => AuditReport, options: VerifyOptions): void {
  for (const backend of options.backends ?? []) if (typeof backend === "string") assertedBackends().add(backend);
  const report = read(options);
  if (report.ok) return;
  const scope = options.backends === undefined ? "" : ` for ${options.backends.join(", ")}`;
  const lines = report.problems.map((p) => `  - [${p.kind}] ${p.message}`);
  const list = `${report.problems.length} registration problem${report.problems.length === 1 ? "" : "s"}${scope}:\n${lines.join("\n")}`;
  const unserved = [...new Set(report.problems.flatMap((p) => (p.kind === "no-loader" ? [p.backend] : [])))];
  if (unserved.length > 0) {
    throw new DispatchHookError(
      "ERR_DISPATCH_NO_LOADER",
      `No table of ${unserved.join(", ")} exists, and no dispatch-hook loader or host adapter is installed in this thread that could make one signal. ` +
        "Start the program with node --import dispatch-hook/loader.mjs, run it through a host adapter (dispatch-hook/vitest, dispatch-hook/vite, dispatch-hook/esbuild or dispatch-hook/jest), or have the framework call provide() in its dispatch modules.\n" +
        list,
      { details: { problems: report.problems } },
    );
  }
  throw new DispatchHookError("ERR_DISPATCH_INCOMPLETE", list, { details: { problems: report.problems } });
}

/** A report, and everything in it, made read-only: what user code gets is a snapshot it cannot change. */
export function frozen<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) frozen((value as Record<string, unknown>)[key]);
  }
  return value;
}

/**
 * The log (frozen: none of its methods can be replaced on it), its only writer, and the registry's
 * own ways of reading it, which go through nothing user code can reach. @internal
 */
export function createAuditLog(report: (events: readonly AuditEvent[], options: VerifyOptions) => AuditReport): {
  log: AuditLog;
  record: (event: Unsequenced<AuditEvent>) => void;
  events: () => AuditEvent[];
  report: (options: VerifyOptions) => AuditReport;
} {
  const events: AuditEvent[] = [];
  const read = (options: VerifyOptions) => frozen(report(events, options));
  const log = new AuditLog(token, events);
  Object.freeze(log);
  const record = (event: Unsequenced<AuditEvent>) => {
    (event as { seq: number }).seq = events.length;
    events.push(event as AuditEvent);
  };
  return { log, record, events: () => events.map(toData), report: read };
}
