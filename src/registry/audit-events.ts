/**
 * A registry's audit log, its events and the report folded from them (plain data: `JSON.stringify`
 * gives them whole). Read-only: events come from its registry, so a report cannot be forged into "ok".
 */
import { type ErrorSummary, logChangesKey } from "../channel.js";
import { hub } from "../hub.js";
import { DispatchHookError } from "./errors.js";

export type { ErrorSummary } from "../channel.js";

/** How an application reached its table. */
export type Mechanism =
  /** The registration waited, and a loader hook signalled the dispatch module. */
  | "hook"
  /** The registration waited, and the framework announced its table itself (announce() or registry.provide()). */
  | "native"
  /** The table already existed when the registration was made. */
  | "immediate";

export type RegistrationState = "pending" | "applied" | "failed" | "disposed" | "superseded" | "refused";

/** Where a declarative registration came from: a plugin's registration module, while its backend loaded. */
export interface Origin {
  readonly plugin: string;
  readonly module: string;
}

type Event<K extends string, F> = { readonly kind: K; readonly seq: number } & F;
type Reg = { readonly id: number; readonly backend: string; readonly op: string };

/** One step in a registration's (or a table's) life. */
export type AuditEvent =
  | Event<"requested", Reg & { readonly site: string; readonly origin?: Origin | undefined; readonly override?: boolean }>
  | Event<"applied", Reg & { readonly table: number; readonly module: string | undefined; readonly mechanism: Mechanism }>
  | Event<"failed", Reg & { readonly table: number; readonly module: string | undefined; readonly error: ErrorSummary }>
  | Event<"disposed", Reg & { readonly reason: "handle" | "restore" | "registry" }>
  /** A disposal the table did not accept: the implementation is still in it. */
  | Event<"stuck", Reg & { readonly table: number; readonly module: string | undefined; readonly error: ErrorSummary }>
  | Event<"restored", Reg>
  | Event<"superseded", Reg & { readonly by: number; readonly note?: string }>
  | Event<
      "refused",
      {
        /** Set when an accepted registration was refused (by a table, or as a plugin's losing registration). */
        readonly id: number | undefined;
        readonly backend: string;
        readonly op: string;
        readonly code: string;
        readonly message: string;
        readonly table: number | undefined;
        readonly origin?: Origin | undefined;
      }
    >
  /** A dispatch received a class that has the name of an applied registration's class, but is another class. */
  | Event<"identity", Reg & { readonly message: string }>
  /** A dispatch missed on a table of this backend that the registry was never given. */
  | Event<"unseen-table", { readonly backend: string; readonly op: string; readonly message: string }>
  | Event<
      "provided",
      {
        readonly backend: string;
        readonly table: number;
        readonly tableKind: string;
        readonly module: string | undefined;
        readonly mechanism: Exclude<Mechanism, "immediate">;
      }
    >
  /** A table was announced, but it is not a table the registry can use. */
  | Event<"rejected", { readonly backend: string; readonly module: string | undefined; readonly message: string }>
  | Event<"withdrawn", { readonly backend: string; readonly table: number }>
  | Event<"expected", { readonly backend: string; readonly ops: readonly string[]; readonly source: string }>
  /** Op types named with expect() since a snapshot, taken back by restore(). */
  | Event<"expectation-withdrawn", { readonly backend: string; readonly ops: readonly string[] }>
  | Event<"sealed", { readonly backend: string; readonly sealed: boolean }>
  /**
   * The registry is a backend set's, which now knows its backends (declared in code or read from
   * package.json): a registration pending on a backend it has not declared is a problem from here on.
   */
  | Event<"backend-set", { readonly set: string }>
  /**
   * A backend set left out a backend a package.json declared (an implementation keyed by a misspelt
   * function name); or, made when the audit is read, not logged: a declaration in force that does not
   * do what it says (a misspelt priority, an implementation declared in code under a misspelt function name).
   */
  | Event<"declaration", { readonly backend: string; readonly code: string; readonly message: string }>
  /** Made when the audit is read, not logged: a backend set's lazily named implementation whose module does not resolve. */
  | Event<"unresolved", { readonly backend: string; readonly op: string; readonly message: string }>
  /** Made when the audit is read, not logged: an applied registration's entry that its table no longer holds (replaced or removed outside the registry). */
  | (Event<"displaced", { readonly table: number; readonly module: string | undefined; readonly removed: boolean }> & Reg)
  /** Made when the audit is read, not logged: an applied registration's entry that a newer registration of another registry overrode in that table. */
  | (Event<"overridden", { readonly table: number; readonly module: string | undefined }> & Reg);

export type AuditEventKind = AuditEvent["kind"];
export type Unsequenced<E> = E extends AuditEvent ? Omit<E, "seq"> & { seq?: number } : never;

export interface RegistrationRecord {
  readonly id: number;
  /** Which registry made it, in a report that covers several ("default", "#2", with the copy's path if there are several copies). */
  readonly registry?: string;
  readonly backend: string;
  readonly op: string;
  readonly state: RegistrationState;
  readonly site: string;
  /** Set for a plugin's declarative registration. */
  readonly origin: Origin | undefined;
  /** One entry per table it reached (several providers give several). */
  readonly tables: ReadonlyArray<{
    readonly table: number;
    readonly module: string | undefined;
    readonly outcome: "applied" | "failed" | "refused";
    readonly mechanism?: Mechanism;
  }>;
  readonly error: ErrorSummary | undefined;
}

/** An entry a plugin's registration module wrote into a table directly, outside any registry. */
export interface OutsideRecord {
  readonly backend: string;
  readonly op: string;
  readonly plugin: string;
  readonly module: string;
  /** The dispatch module instance whose table it wrote. */
  readonly table: string;
  readonly replaced: boolean;
}

/** A plugin's registration module and what became of it. */
export interface PluginModuleRecord {
  readonly plugin: string;
  readonly backend: string;
  readonly module: string;
  readonly for: string;
  readonly state: "loaded" | "missing" | "failed" | "loading";
  readonly error: ErrorSummary | undefined;
}

export type ProblemKind =
  | "pending"
  | "failed"
  | "conflict"
  | "missing"
  | "table"
  | "loader"
  | "no-loader"
  | "identity"
  | "stuck"
  | "declaration"
  | "implementation"
  | "displaced";

export interface Problem {
  readonly kind: ProblemKind;
  readonly backend: string;
  readonly op: string;
  readonly id: number | undefined;
  /** The error code behind it, where the kind alone does not say (a backend set's `declaration` and `implementation` problems). */
  readonly code?: string;
  readonly message: string;
}

export interface BackendRecord {
  readonly backend: string;
  /** Tables of this backend that exist in the thread. */
  readonly tables: number;
  readonly loaded: boolean;
  readonly sealed: boolean;
}

export interface AuditReport {
  /** No problems. Says nothing about whether anything was checked: see `checked`. */
  readonly ok: boolean;
  /** How many things were checked: registrations, and expectations on backends that loaded. */
  readonly checked: number;
  readonly registrations: readonly RegistrationRecord[];
  readonly outside: readonly OutsideRecord[];
  readonly plugins: readonly PluginModuleRecord[];
  readonly backends: readonly BackendRecord[];
  readonly problems: readonly Problem[];
  /** What the audit saw, for a reader: the loaders, what they watched, what loaded. */
  readonly notes: readonly string[];
}

export interface VerifyOptions {
  /** Backends the caller is about to use: a registration pending on one is a problem even if its table was never provided. */
  readonly backends?: readonly string[];
}

const token = Symbol("AuditLog");

export function toData(event: AuditEvent): AuditEvent {
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

/** A report, and everything in it, made read-only: what user code gets is a snapshot it cannot change. */
export function frozen<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) frozen((value as Record<string, unknown>)[key]);
  }
  return value;
}

/** What a change to any registry's log calls, whichever copy of dispatch-hook made it: a worker's running record (worker-record.ts). */
export interface LogChanges {
  changed: (() => void) | undefined;
}
let changes: LogChanges | undefined;
/** The thread's LogChanges, shared by every copy through the hub. @internal */
export const logChanges = (): LogChanges => hub().shared(logChangesKey, (): LogChanges => ({ changed: undefined }));
/** Says that something a thread's audit reads has changed (a log grew, a backend was asserted, a table was made or used). @internal */
export function signalChange(): void {
  changes ??= logChanges();
  changes.changed?.();
}

/** The log (frozen: none of its methods can be replaced on it), its events, and its only writer. @internal */
export function createAuditLog(): { log: AuditLog; events: AuditEvent[]; record: (event: Unsequenced<AuditEvent>) => void } {
  const events: AuditEvent[] = [];
  const log = new AuditLog(token, events);
  Object.freeze(log);
  // The hot events carry `seq` in their literal: added here, it would cost each kept event a second object.
  const record = (event: Unsequenced<AuditEvent>) => {
    (event as { seq: number }).seq = events.length;
    events.push(event as AuditEvent);
    signalChange();
  };
  return { log, events, record };
}
