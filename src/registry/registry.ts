/**
 * The registry: it holds a plugin's registrations until a backend's table exists, applies them
 * through the table's own API, and records every step in its audit log. Per-backend bookkeeping is
 * in backend-state.ts, subscriptions in table-feed.ts, miss explanations in miss-explainer.ts and
 * the audit in audit-*.ts; this file keeps the public methods and the rules that join them.
 */
import { url } from "../builtins.js";
import type {
  AuditCollectMessage,
  DispatchMissMessage,
  ModuleEvaluatedMessage,
  TableNotice,
  TableProvidedMessage,
  TableWrittenMessage,
} from "../channel.js";
import { noticeTable } from "../table-entries.js";
import type { AuditEvent, AuditReport, Origin, RegistrationState, Unsequenced, VerifyOptions } from "./audit-events.js";
import { fold } from "./audit-fold.js";
import { type AuditLog, createAuditLog } from "./audit-log.js";
import { buildReport } from "./audit-report.js";
import { BackendState } from "./backend-state.js";
import { captureCallSite, formatCallSite } from "./call-site.js";
import { type Class, type Impl, isClass } from "./dispatcher.js";
import { DispatchHookError, describe } from "./errors.js";
import { MissExplainer } from "./miss-explainer.js";
import { checkBackend } from "./names.js";
import { checkOptions } from "./options.js";
import { Registration, type RegistrationHandle, RequestedEvent, type Table, type TableHandle } from "./registration.js";
import type { DeclareOptions, ProvideMeta, RegisterOptions, RegistryOptions, RegistrySnapshot } from "./registry-types.js";
import { adapterFor, checkAdapter } from "./table-adapter.js";
import { TableFeed } from "./table-feed.js";
import { TableWriter } from "./table-writer.js";
import { currentWindow, gatherFacts, tableNotices } from "./thread-facts.js";

export type { HandleState, RegistrationHandle, TableHandle } from "./registration.js";
export type { DeclareOptions, ProvideMeta, RegisterOptions, RegistryOptions, RegistrySnapshot } from "./registry-types.js";

const snapshots = new WeakMap<RegistrySnapshot, Registry>();
const defaults = new WeakSet<Registry>();

/** @internal Marks a copy's default registry (default-registry.ts). */
export function markDefault(registry: Registry): Registry {
  defaults.add(registry);
  return registry;
}
/** Registration states that have not landed: a registry holding any is kept alive. */
const unsettledStates: ReadonlySet<RegistrationState> = new Set(["pending", "failed", "refused"]);
// Names for the thread-wide audit only; the copy's directory tells copies apart there.
let created = 0;
const copy = (() => {
  try {
    return url.fileURLToPath(new URL("../..", import.meta.url));
  } catch {
    return "?";
  }
})();

function opName(type: Class): string {
  return type.name || "(anonymous class)";
}

export class Registry {
  readonly audit: AuditLog;
  readonly #record: (event: Unsequenced<AuditEvent>) => void;
  readonly #backends = new Map<string, BackendState>();
  /** Every registration ever accepted, indexed by id (ids are sequential). */
  readonly #registrations: Registration[] = [];
  readonly #callSites: boolean;
  readonly #name: string;
  readonly #feed: TableFeed<Registry>;
  readonly #misses = new MissExplainer();
  /** Tables withdrawn with their handle: announcements of them are not accepted again. */
  readonly #withdrawn = new WeakSet<object>();
  readonly #writer: TableWriter = new TableWriter({
    record: (event) => this.#record(event),
    setState: (registration, next) => this.#setState(registration, next),
    backend: (name) => this.#backend(name),
    existing: (name) => this.#backends.get(name),
    backends: () => this.#backends.values(),
    listen: () => this.#listen(),
    stopListening: () => this.#feed.listen(false),
    withdrawn: this.#withdrawn,
  });
  readonly #disposeHandle = (registration: Registration) => {
    if (registration.state !== "disposed" && !this.#disposed) this.#writer.dispose(registration, "handle");
  };
  #nextId = 0;
  #nextTable = 0;
  #disposed = false;
  /** Registrations not landed, plus problems and expectations recorded: while > 0 the registry is held. */
  #unsettled = 0;
  #sticky = 0;

  constructor(options: RegistryOptions = {}) {
    checkOptions(options, { callSites: "boolean", name: "string" }, "createRegistry()");
    this.#callSites = options.callSites ?? true;
    this.#name = options.name ?? `#${++created}`;
    const { log, record } = createAuditLog((events, verifyOptions) => this.#report(events, verifyOptions));
    this.audit = log;
    this.#record = (event) => {
      record(event);
      if (
        event.kind === "refused" ||
        event.kind === "identity" ||
        event.kind === "unseen-table" ||
        event.kind === "stuck" ||
        event.kind === "rejected"
      ) {
        this.#sticky++;
        this.#hold();
      }
    };
    this.#feed = new TableFeed<Registry>(this, {
      evaluated: (registry, message) => {
        const m = message as ModuleEvaluatedMessage;
        registry.#accept({ via: "hook", backend: m.backend, module: m.url, namespace: m.namespace, exportName: m.exportName });
      },
      provided: (registry, message) => {
        const m = message as TableProvidedMessage;
        registry.#accept({ via: "native", backend: m.backend, module: m.module, table: m.table });
      },
      miss: (registry, message) => registry.#explainMiss(message as DispatchMissMessage),
      collect: (registry, message) => {
        (message as AuditCollectMessage).registries.push({ name: registry.#name, copy, events: registry.audit.events() });
      },
      written: (registry, message) => {
        const m = message as TableWrittenMessage;
        for (const state of registry.#backends.values()) {
          const table = state.tables.find((t) => t.table === m.table);
          const owner = table === undefined ? undefined : state.owners.get(m.opType as Class);
          if (owner !== undefined && owner.impl === m.impl && owner.inTable(table)) m.written = true;
        }
      },
    });
  }

  /**
   * Registers `impl` for `opType` on `backend`. If the backend's table exists it is applied now;
   * otherwise it waits for the table. Returns a handle that undoes it.
   */
  register(backend: string, opType: Class, impl: Impl, options?: RegisterOptions): RegistrationHandle {
    return this.registerFrom(this.register, backend, opType, impl, options);
  }

  /** register() with the frame to report as the caller. @internal */
  /** @internal Registers as `register()` does, with the call site taken above `caller`. */
  registerFrom(caller: Function, backend: string, opType: Class, impl: Impl, options?: RegisterOptions): RegistrationHandle {
    this.#checkOpen("register()");
    checkBackend(backend, "register()");
    if (!isClass(opType)) {
      throw new DispatchHookError(
        "ERR_DISPATCH_INVALID_OP_TYPE",
        `register(${JSON.stringify(backend)}, …): the op type must be a class, got ${describe(opType)}.`,
      );
    }
    if (typeof impl !== "function") {
      throw new DispatchHookError(
        "ERR_DISPATCH_INVALID_IMPL",
        `register(${JSON.stringify(backend)}, ${opName(opType)}, …): the implementation must be a function, got ${describe(impl)}.`,
      );
    }
    checkOptions(options, { override: "boolean" }, `register(${JSON.stringify(backend)}, ${opName(opType)}, …)`);
    const override = options?.override === true;
    const window = currentWindow();
    const origin: Origin | undefined = window === undefined ? undefined : { plugin: window.plugin, module: window.module };
    const state = this.#backends.get(backend);
    const owner = state?.owners.get(opType);
    const site = this.#callSites ? captureCallSite(caller) : undefined;
    if (state?.sealed) {
      return this.#refuse(
        "ERR_DISPATCH_SEALED",
        { backend, opType, impl, override, origin, site },
        `The ${backend} backend is sealed; ${opName(opType)} cannot be registered. The framework sealed it; register before it does.`,
      );
    }
    if (owner !== undefined) {
      // The same implementation again: its own handle, waiting behind the first, so that disposing
      // one leaves the other in place.
      if (owner.impl === impl)
        return this.#writer.wait(this.#accepted(backend, opType, impl, override, origin, site), owner, "the same implementation");
      // An app's explicit override wins over a plugin's declarative registration, whichever comes first.
      if (origin !== undefined && owner.origin === undefined && owner.override) {
        return this.#writer.wait(this.#accepted(backend, opType, impl, override, origin, site), owner, "the app's explicit override wins");
      }
      if (!override) {
        return this.#refuse(
          "ERR_DISPATCH_CONFLICT",
          { backend, opType, impl, override, origin, site },
          `${opName(opType)} already has an implementation on ${backend} (registration #${owner.id}${owner.origin === undefined ? "" : `, ${owner.origin.plugin}'s`}). Pass { override: true } to replace it, or dispose the other registration first.`,
        );
      }
    }
    const registration = this.#accepted(backend, opType, impl, override, origin, site);
    // A plugin's registration module runs because the loader loaded it with its backend: "hook".
    this.#writer.activate(registration, origin === undefined ? "immediate" : "hook");
    return registration;
  }

  /**
   * Hands the registry a backend's dispatch table. Every waiting registration for the backend is
   * applied now, in registration order; later ones apply at once. Several tables may be provided
   * for one backend (several module instances); each gets every registration.
   */
  provide(backend: string, table: unknown, meta?: ProvideMeta): TableHandle {
    this.#checkOpen("provide()");
    checkBackend(backend, "provide()");
    checkOptions(meta, { module: "string", via: ["hook", "native"], adapter: "object" }, `provide(${JSON.stringify(backend)}, …)`);
    const custom = meta?.adapter === undefined ? undefined : checkAdapter(meta.adapter, `provide(${JSON.stringify(backend)}, …)`);
    const adapter = adapterFor(table, backend, custom ?? this.#backends.get(backend)?.adapter);
    this.#feed.join();
    const state = this.#backend(backend);
    const known = state.tables.find((t) => t.table === table);
    if (known !== undefined) return known.handle;
    this.#withdrawn.delete(table as object);
    const id = this.#nextTable++;
    const entry: Table = {
      id,
      backend,
      table: table as object,
      adapter,
      module: meta?.module,
      mechanism: meta?.via ?? "native",
      originals: new Map(),
      handle: { id, backend, dispose: () => this.#writer.withdraw(entry), [Symbol.dispose]: () => this.#writer.withdraw(entry) },
    };
    state.tables.push(entry);
    this.#record({
      kind: "provided",
      backend,
      table: id,
      tableKind: adapter.kind ?? "custom",
      module: entry.module,
      mechanism: entry.mechanism,
    });
    for (const registration of state.live()) state.enqueue(registration, entry, entry.mechanism);
    state.drain(this.#writer.apply);
    return entry.handle;
  }

  /** Declares how to treat a backend's tables before any is provided. */
  declare(backend: string, options: DeclareOptions): void {
    this.#checkOpen("declare()");
    checkBackend(backend, "declare()");
    checkOptions(options, { adapter: "object" }, `declare(${JSON.stringify(backend)}, …)`);
    const adapter = options?.adapter === undefined ? undefined : checkAdapter(options.adapter, `declare(${JSON.stringify(backend)}, …)`);
    this.#backend(backend).adapter = adapter;
  }

  /** Names op types that must be registered on `backend`; verify() reports any that never are. */
  expect(backend: string, ops: readonly string[], source?: string): void {
    this.#checkOpen("expect()");
    checkBackend(backend, "expect()");
    if (!Array.isArray(ops) || ops.some((op) => typeof op !== "string" || op.length === 0)) {
      throw new DispatchHookError(
        "ERR_DISPATCH_INVALID_OPTION",
        `expect(${JSON.stringify(backend)}, …): the op names must be an array of non-empty strings.`,
      );
    }
    if (source !== undefined && typeof source !== "string") {
      throw new DispatchHookError("ERR_DISPATCH_INVALID_OPTION", `expect(): "source" must be a string, got ${describe(source)}.`);
    }
    this.#feed.join();
    this.#record({ kind: "expected", backend, ops: [...ops], source: source ?? formatCallSite(captureCallSite(this.expect)) });
    this.#sticky++;
    this.#hold();
  }

  /** After this, registrations for `backend` are refused with ERR_DISPATCH_SEALED. */
  seal(backend: string): void {
    this.#checkOpen("seal()");
    checkBackend(backend, "seal()");
    const state = this.#backend(backend);
    if (state.sealed) return;
    state.sealed = true;
    this.#record({ kind: "sealed", backend, sealed: true });
  }

  isSealed(backend: string): boolean {
    return this.#backends.get(backend)?.sealed ?? false;
  }

  /** Registrations for `backend` (all backends if omitted) that are still waiting for a table. */
  pending(backend?: string): RegistrationHandle[] {
    return this.#registrations.filter((r) => r.state === "pending" && (backend === undefined || r.backend === backend));
  }

  /**
   * The audit report: every registration with its state, and the problems. It includes what the
   * thread's loaders know (a module they could not see, say), and, for the registry a loader feeds,
   * the plugins' expectations and registration modules. Same as registry.audit.verify().
   */
  verify(options?: VerifyOptions): AuditReport {
    return this.audit.verify(options);
  }

  /** Throws ERR_DISPATCH_INCOMPLETE listing every problem, if there is one. */
  assertComplete(options?: VerifyOptions): void {
    this.audit.assertComplete(options);
  }

  /** Records which registrations are live and which backends are sealed. */
  snapshot(): RegistrySnapshot {
    this.#checkOpen("snapshot()");
    const live = new Set(this.#registrations.filter((r) => r.state !== "disposed").map((r) => r.id));
    const sealed = new Set([...this.#backends.values()].filter((b) => b.sealed).map((b) => b.name));
    const snapshot: RegistrySnapshot = Object.freeze({ live, sealed });
    snapshots.set(snapshot, this);
    return snapshot;
  }

  /**
   * Returns to a snapshot: registrations made since are disposed, those disposed since come back
   * (into every table, including tables provided since), and seals are as they were. Tables stay.
   */
  restore(snapshot: RegistrySnapshot): void {
    this.#checkOpen("restore()");
    if (snapshots.get(snapshot) !== this) {
      throw new DispatchHookError("ERR_DISPATCH_INVALID_SNAPSHOT", "restore() needs a snapshot taken from this registry with snapshot().");
    }
    for (const registration of this.#registrations.slice().reverse()) {
      if (!snapshot.live.has(registration.id) && registration.state !== "disposed") this.#writer.dispose(registration, "restore");
    }
    for (const registration of this.#registrations) {
      if (snapshot.live.has(registration.id) && registration.state === "disposed") this.#writer.revive(registration);
    }
    for (const state of this.#backends.values()) {
      const sealed = snapshot.sealed.has(state.name);
      if (state.sealed !== sealed) {
        state.sealed = sealed;
        this.#record({ kind: "sealed", backend: state.name, sealed });
      }
    }
  }

  /** Undoes every registration, leaves the thread's audit, and refuses further calls. The audit log stays readable. */
  dispose(): void {
    if (this.#disposed) return;
    for (const registration of this.#registrations.slice().reverse()) {
      if (registration.state !== "disposed") this.#writer.dispose(registration, "registry");
    }
    this.#disposed = true;
    this.#feed.leave();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  // ---- internals -------------------------------------------------------------------------

  #checkOpen(where: string): void {
    if (this.#disposed) {
      throw new DispatchHookError(
        "ERR_DISPATCH_REGISTRY_DISPOSED",
        `${where}: this registry was disposed. Create a new one with createRegistry().`,
      );
    }
  }

  #report(events: readonly AuditEvent[], options: VerifyOptions): AuditReport {
    const own = [...this.#backends.values()].flatMap((b) =>
      b.tables.map((t) => ({ backend: t.backend, module: t.module, table: t.table })),
    );
    const facts = gatherFacts(own);
    // With no loader, the default registry is the one host adapters' facades feed.
    const connected = facts.loaders.some((loader) => loader.registry === this) || (facts.loaders.length === 0 && defaults.has(this));
    return buildReport([{ fold: fold(events) }], facts, { connected, focus: options.backends });
  }

  #hold(): void {
    this.#feed.hold(!this.#disposed && this.#unsettled + this.#sticky > 0);
  }

  #setState(registration: Registration, next: RegistrationState): void {
    const before = unsettledStates.has(registration.state);
    registration.state = next;
    const after = unsettledStates.has(next);
    if (before !== after) {
      this.#unsettled += after ? 1 : -1;
      this.#hold();
    }
  }

  #backend(name: string): BackendState {
    let state = this.#backends.get(name);
    if (state === undefined) {
      state = new BackendState(name);
      this.#backends.set(name, state);
    }
    return state;
  }

  /** A new registration, recorded as requested (state pending; not yet the owner of anything). */
  #accepted(
    backend: string,
    opType: Class,
    impl: Impl,
    override: boolean,
    origin: Origin | undefined,
    site: ReturnType<typeof captureCallSite> | undefined,
  ): Registration {
    const registration = new Registration(this.#nextId++, backend, opType, opName(opType), impl, override, this.#disposeHandle);
    registration.origin = origin;
    this.#registrations.push(registration);
    registration.requested = new RequestedEvent(registration, site);
    this.#feed.join();
    this.#record(registration.requested);
    this.#unsettled++;
    this.#hold();
    return registration;
  }

  /** A refusal: thrown at the caller, or, for a plugin's declarative registration, recorded and returned. */
  #refuse(
    code: "ERR_DISPATCH_SEALED" | "ERR_DISPATCH_CONFLICT",
    what: {
      backend: string;
      opType: Class;
      impl: Impl;
      override: boolean;
      origin: Origin | undefined;
      site: ReturnType<typeof captureCallSite> | undefined;
    },
    message: string,
  ): Registration {
    const { backend, opType, origin } = what;
    if (origin === undefined) {
      this.#feed.join();
      this.#record({ kind: "refused", id: undefined, backend, op: opName(opType), code, message, table: undefined });
      throw new DispatchHookError(code, message, { details: { backend, op: opName(opType) } });
    }
    // Thrown here, it would take the framework's backend down with the plugin.
    const registration = this.#accepted(backend, opType, what.impl, what.override, origin, what.site);
    this.#setState(registration, "refused");
    this.#record({ kind: "refused", id: registration.id, backend, op: registration.op, code, message, table: undefined, origin });
    return registration;
  }

  /** Listens for tables while the registry has live registrations; on starting, learns those that exist. */
  #listen(): void {
    if (!this.#feed.listen(true)) return;
    for (const notice of tableNotices()) this.#accept(notice);
  }

  /** A table announced by a loader signal or a native provide() elsewhere in the thread. */
  #accept(notice: TableNotice): void {
    let table: unknown;
    try {
      table = noticeTable(notice);
      if (typeof table === "object" && table !== null && this.#withdrawn.has(table)) return;
      this.provide(notice.backend, table, { via: notice.via, ...(notice.module === undefined ? {} : { module: notice.module }) });
    } catch (error) {
      const what = notice.via === "hook" ? `its export ${JSON.stringify(notice.exportName)}` : "the table it provided";
      const reason = error instanceof Error ? error.message : String(error);
      this.#record({
        kind: "rejected",
        backend: String(notice.backend),
        module: notice.module,
        message: `${notice.module ?? "a module"} signalled backend ${JSON.stringify(notice.backend)}, but ${what} could not be used: ${reason}`,
      });
    }
  }

  #explainMiss(message: DispatchMissMessage): void {
    this.#misses.explain(message, { registrations: this.#registrations, backend: (name) => this.#backend(name), record: this.#record });
  }
}

/** Creates an isolated registry. */
export function createRegistry(options?: RegistryOptions): Registry {
  return new Registry(options);
}
