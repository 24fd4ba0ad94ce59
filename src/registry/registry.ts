import type { Channel } from "node:diagnostics_channel";
import {
  channels,
  type DispatchMissMessage,
  type LoaderStatusMessage,
  type ModuleEvaluatedMessage,
  type TableNotice,
  type TableProvidedMessage,
  type TableQueryMessage,
} from "../hooks/channel.js";
import { AuditLog, type AuditReport, type Mechanism, summarizeError, type VerifyOptions } from "./audit-log.js";
import { captureCallSite, formatCallSite } from "./call-site.js";
import { type Class, type Impl, isClass } from "./dispatcher.js";
import { DispatchHookError, describe } from "./errors.js";
import { noTables, Registration, type RegistrationHandle, RequestedEvent, type Table, type TableHandle } from "./registration.js";
import { adapterFor, checkAdapter, type TableAdapter } from "./table-adapter.js";

export interface RegisterOptions {
  /** Replace an existing implementation of the op type on this backend. */
  readonly override?: boolean;
}

export interface ProvideMeta {
  /** The URL of the module instance the table belongs to. */
  readonly module?: string;
  /** "hook" when a loader signalled the module; "native" (default) when the framework calls provide(). */
  readonly via?: "hook" | "native";
  /** How to read and write this table, when it is not a Dispatcher, a Map or register()-shaped. */
  readonly adapter?: TableAdapter;
}

export interface DeclareOptions {
  /** The adapter for every table of this backend. */
  readonly adapter?: TableAdapter;
}

export interface RegistryOptions {
  /** Record the caller's file:line for each registration (default true). */
  readonly callSites?: boolean;
}

export type { HandleState, RegistrationHandle, TableHandle } from "./registration.js";

/** An opaque record of a registry's state, for restore(). */
export interface RegistrySnapshot {
  readonly live: ReadonlySet<number>;
  readonly sealed: ReadonlySet<string>;
}

interface Job {
  readonly registration: Registration;
  readonly table: Table;
  readonly mechanism: Mechanism;
}

interface Backend {
  readonly name: string;
  readonly tables: Table[];
  /** The live registration per op type; superseded ones wait below it. */
  readonly owners: Map<Class, Registration>;
  readonly superseded: Map<Class, Registration[]>;
  sealed: boolean;
  adapter: TableAdapter | undefined;
  readonly queue: Job[];
  draining: boolean;
}

const reservedNames = new Set(["__proto__", "constructor", "prototype"]);
const registerOptionKeys = new Set(["override"]);
const provideMetaKeys = new Set(["module", "via", "adapter"]);
const registryOptionKeys = new Set(["callSites"]);
const snapshots = new WeakMap<RegistrySnapshot, Registry>();

function checkKeys(value: unknown, allowed: ReadonlySet<string>, where: string): void {
  if (value === undefined) return;
  if (typeof value !== "object" || value === null) {
    throw new DispatchHookError("ERR_DISPATCH_INVALID_OPTION", `${where}: options must be an object, got ${describe(value)}.`);
  }
  for (const key of Object.keys(value)) {
    if (!allowed.has(key)) {
      throw new DispatchHookError(
        "ERR_DISPATCH_INVALID_OPTION",
        `${where}: unknown option ${JSON.stringify(key)}; known options are ${[...allowed].join(", ")}.`,
      );
    }
  }
}

function checkBackend(backend: unknown, where: string): asserts backend is string {
  if (typeof backend !== "string" || backend.length === 0) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_BACKEND",
      `${where}: the backend must be a non-empty string, got ${describe(backend)}.`,
    );
  }
  if (reservedNames.has(backend)) {
    throw new DispatchHookError(
      "ERR_DISPATCH_RESERVED_NAME",
      `${where}: ${JSON.stringify(backend)} cannot be a backend name, because it names a property of every object. Choose another name.`,
    );
  }
}

function opName(type: Class): string {
  return type.name || "(anonymous class)";
}

/**
 * Holds a plugin's registrations until a backend's table exists, then applies them through the
 * table's own API, and records every step in an audit log.
 */
export class Registry {
  readonly audit = new AuditLog();
  readonly #backends = new Map<string, Backend>();
  /** Every registration ever accepted, indexed by id (ids are sequential). */
  readonly #registrations: Registration[] = [];
  readonly #callSites: boolean;
  readonly #findings = new Set<string>();
  readonly #disposeHandle = (registration: Registration) => {
    if (registration.state !== "disposed" && !this.#disposed) this.#dispose(registration, "handle");
  };
  #nextId = 0;
  #nextTable = 0;
  #disposed = false;
  #listening = false;
  readonly #listeners: ReadonlyArray<readonly [Channel, (message: unknown) => void]>;

  constructor(options: RegistryOptions = {}) {
    checkKeys(options, registryOptionKeys, "createRegistry()");
    if (options.callSites !== undefined && typeof options.callSites !== "boolean") {
      throw new DispatchHookError(
        "ERR_DISPATCH_INVALID_OPTION",
        `createRegistry(): "callSites" must be a boolean, got ${describe(options.callSites)}.`,
      );
    }
    this.#callSites = options.callSites ?? true;
    // Weak listeners: a registry that was never disposed can still be collected. A listener never
    // throws: it runs inside the publishing dispatch module, which must not fail because of us.
    const self = new WeakRef(this);
    const weak = (channel: (typeof channels)[keyof typeof channels], handle: (registry: Registry, message: unknown) => void) => {
      const listener = (message: unknown) => {
        const registry = self.deref();
        if (registry === undefined) {
          channel.unsubscribe(listener);
          return;
        }
        try {
          handle(registry, message);
        } catch {
          // Each handler records its own failures in the audit log.
        }
      };
      return [channel, listener] as const;
    };
    this.#listeners = [
      weak(channels.dispatchMiss, (registry, message) => registry.#explainMiss(message as DispatchMissMessage)),
      weak(channels.moduleEvaluated, (registry, message) => {
        const m = message as ModuleEvaluatedMessage;
        registry.#accept({ via: "hook", backend: m.backend, module: m.url, namespace: m.namespace, exportName: m.exportName });
      }),
      weak(channels.tableProvided, (registry, message) => {
        const m = message as TableProvidedMessage;
        registry.#accept({ via: "native", backend: m.backend, module: m.module, table: m.table });
      }),
    ];
  }

  /**
   * Registers `impl` for `opType` on `backend`. If the backend's table exists it is applied now;
   * otherwise it waits for provide(). Returns a handle that undoes it.
   */
  register(backend: string, opType: Class, impl: Impl, options?: RegisterOptions): RegistrationHandle {
    return this.registerFrom(this.register, backend, opType, impl, options);
  }

  /** register() with the frame to report as the caller. @internal */
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
    checkKeys(options, registerOptionKeys, `register(${JSON.stringify(backend)}, ${opName(opType)}, …)`);
    if (options?.override !== undefined && typeof options.override !== "boolean") {
      throw new DispatchHookError(
        "ERR_DISPATCH_INVALID_OPTION",
        `register(): "override" must be a boolean, got ${describe(options.override)}.`,
      );
    }
    const state = this.#backends.get(backend);
    const owner = state?.owners.get(opType);
    if (owner !== undefined && owner.impl === impl) return owner;
    if (state?.sealed)
      this.#refuse(
        "ERR_DISPATCH_SEALED",
        backend,
        opType,
        `The ${backend} backend is sealed; ${opName(opType)} cannot be registered. The framework sealed it; register before it does.`,
      );
    if (owner !== undefined && options?.override !== true) {
      this.#refuse(
        "ERR_DISPATCH_CONFLICT",
        backend,
        opType,
        `${opName(opType)} already has an implementation on ${backend} (registration #${owner.id}). Pass { override: true } to replace it, or dispose the other registration first.`,
      );
    }
    const site = this.#callSites ? captureCallSite(caller) : undefined;
    const registration = this.#create(backend, opType, impl, options?.override === true);
    registration.requested = new RequestedEvent(registration, site);
    this.audit.record(registration.requested);
    this.#activate(registration, "immediate");
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
    checkKeys(meta, provideMetaKeys, `provide(${JSON.stringify(backend)}, …)`);
    if (meta?.module !== undefined && typeof meta.module !== "string") {
      throw new DispatchHookError("ERR_DISPATCH_INVALID_OPTION", `provide(): "module" must be a string, got ${describe(meta.module)}.`);
    }
    if (meta?.via !== undefined && meta.via !== "hook" && meta.via !== "native") {
      throw new DispatchHookError("ERR_DISPATCH_INVALID_OPTION", `provide(): "via" must be "hook" or "native", got ${describe(meta.via)}.`);
    }
    const custom = meta?.adapter === undefined ? undefined : checkAdapter(meta.adapter, `provide(${JSON.stringify(backend)}, …)`);
    const existing = this.#backends.get(backend);
    const adapter = adapterFor(table, backend, custom ?? existing?.adapter);
    const state = this.#backend(backend);
    const known = state.tables.find((t) => t.table === table);
    if (known !== undefined) return known.handle;

    const id = this.#nextTable++;
    const entry: Table = {
      id,
      backend,
      table: table as object,
      adapter,
      module: meta?.module,
      mechanism: meta?.via ?? "native",
      originals: new Map(),
      handle: {
        id,
        backend,
        dispose: () => this.#withdraw(entry),
        [Symbol.dispose]: () => this.#withdraw(entry),
      },
    };
    state.tables.push(entry);
    this.audit.record({
      kind: "provided",
      backend,
      table: id,
      tableKind: adapter.kind ?? "custom",
      module: entry.module,
      mechanism: entry.mechanism,
    });
    for (const registration of this.#liveIn(state)) state.queue.push({ registration, table: entry, mechanism: entry.mechanism });
    this.#drain(state);
    return entry.handle;
  }

  /** Declares how to treat a backend's tables before any is provided. */
  declare(backend: string, options: DeclareOptions): void {
    this.#checkOpen("declare()");
    checkBackend(backend, "declare()");
    checkKeys(options, new Set(["adapter"]), `declare(${JSON.stringify(backend)}, …)`);
    const adapter = options.adapter === undefined ? undefined : checkAdapter(options.adapter, `declare(${JSON.stringify(backend)}, …)`);
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
    this.audit.record({ kind: "expected", backend, ops: [...ops], source: source ?? formatCallSite(captureCallSite(this.expect)) });
  }

  /** After this, registrations for `backend` are refused with ERR_DISPATCH_SEALED. */
  seal(backend: string): void {
    this.#checkOpen("seal()");
    checkBackend(backend, "seal()");
    const state = this.#backend(backend);
    if (state.sealed) return;
    state.sealed = true;
    this.audit.record({ kind: "sealed", backend, sealed: true });
  }

  isSealed(backend: string): boolean {
    return this.#backends.get(backend)?.sealed ?? false;
  }

  /** Registrations for `backend` (all backends if omitted) that are still waiting for a table. */
  pending(backend?: string): RegistrationHandle[] {
    const out: RegistrationHandle[] = [];
    for (const registration of this.#registrations) {
      if (registration.state === "pending" && (backend === undefined || registration.backend === backend)) out.push(registration);
    }
    return out;
  }

  /**
   * The audit report: every registration with its state, and the problems. It first asks any
   * installed loader what it could not see (a module loaded by require() on Node 20, say).
   */
  verify(options?: VerifyOptions): AuditReport {
    this.#collectLoaderFindings();
    return this.audit.verify(options);
  }

  /** Throws ERR_DISPATCH_INCOMPLETE listing every problem, if there is one. */
  assertComplete(options?: VerifyOptions): void {
    this.#collectLoaderFindings();
    this.audit.assertComplete(options);
  }

  /** Records which registrations are live and which backends are sealed. */
  snapshot(): RegistrySnapshot {
    this.#checkOpen("snapshot()");
    const live = new Set<number>();
    for (const registration of this.#registrations) {
      if (registration.state !== "disposed") live.add(registration.id);
    }
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
    const newest = this.#registrations.slice().reverse();
    for (const registration of newest) {
      if (!snapshot.live.has(registration.id) && registration.state !== "disposed") this.#dispose(registration, "restore");
    }
    for (const registration of this.#registrations) {
      if (snapshot.live.has(registration.id) && registration.state === "disposed") this.#revive(registration);
    }
    for (const state of this.#backends.values()) {
      const sealed = snapshot.sealed.has(state.name);
      if (state.sealed !== sealed) {
        state.sealed = sealed;
        this.audit.record({ kind: "sealed", backend: state.name, sealed });
      }
    }
  }

  /** Undoes every registration, stops listening, and refuses further calls. The audit log stays readable. */
  dispose(): void {
    if (this.#disposed) return;
    for (const registration of this.#registrations.slice().reverse()) {
      if (registration.state !== "disposed") this.#dispose(registration, "registry");
    }
    this.#disposed = true;
    this.#listen(false);
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

  #refuse(code: "ERR_DISPATCH_SEALED" | "ERR_DISPATCH_CONFLICT", backend: string, opType: Class, message: string): never {
    this.audit.record({ kind: "refused", id: undefined, backend, op: opName(opType), code, message, table: undefined });
    throw new DispatchHookError(code, message, { details: { backend, op: opName(opType) } });
  }

  #backend(name: string): Backend {
    let state = this.#backends.get(name);
    if (state === undefined) {
      state = { name, tables: [], owners: new Map(), superseded: new Map(), sealed: false, adapter: undefined, queue: [], draining: false };
      this.#backends.set(name, state);
    }
    return state;
  }

  #create(backend: string, opType: Class, impl: Impl, override: boolean): Registration {
    const registration = new Registration(this.#nextId++, backend, opType, opName(opType), impl, override, this.#disposeHandle);
    this.#registrations.push(registration);
    return registration;
  }

  /** Makes a registration the owner of its op type and queues it for every table. */
  #activate(registration: Registration, mechanism: Mechanism): void {
    // Learn of tables that already exist first, so that a registration made after its table
    // appeared is applied (and audited) as immediate.
    this.#listen(true);
    const state = this.#backend(registration.backend);
    const previous = state.owners.get(registration.opType);
    if (previous !== undefined) {
      // Only reachable with override: the previous owner steps aside until this one is disposed.
      previous.state = "superseded";
      previous.tables = noTables;
      const waiting = state.superseded.get(registration.opType) ?? [];
      waiting.push(previous);
      state.superseded.set(registration.opType, waiting);
      this.audit.record({ kind: "superseded", id: previous.id, backend: previous.backend, op: previous.op, by: registration.id });
    }
    state.owners.set(registration.opType, registration);
    for (const table of state.tables) state.queue.push({ registration, table, mechanism });
    this.#drain(state);
  }

  /** The live registrations of a backend, oldest first. */
  #liveIn(state: Backend): Registration[] {
    const live = [...state.owners.values()];
    // The map is in registration order unless an heir or a restored registration came back later.
    for (let i = 1; i < live.length; i++) {
      if ((live[i] as Registration).id < (live[i - 1] as Registration).id) return live.sort((a, b) => a.id - b.id);
    }
    return live;
  }

  /**
   * Applies queued work for one backend. A registration made while this runs (from inside an
   * impl's registration, say) is queued behind the current job rather than applied in place, so
   * each (registration, table) pair is applied exactly once and in order.
   */
  #drain(state: Backend): void {
    if (state.draining) return;
    state.draining = true;
    try {
      for (let i = 0; i < state.queue.length; i++) {
        const job = state.queue[i] as Job;
        const { registration, table } = job;
        if (state.owners.get(registration.opType) !== registration || registration.inTable(table)) continue;
        if (!state.tables.includes(table)) continue;
        this.#apply(registration, table, job.mechanism);
      }
    } finally {
      state.queue.length = 0;
      state.draining = false;
    }
  }

  #apply(registration: Registration, table: Table, mechanism: Mechanism): void {
    const { backend, op, opType, id } = registration;
    try {
      if (!table.originals.has(opType)) {
        const original = table.adapter.get(table.table, opType);
        if (original !== undefined && !registration.override) {
          const message =
            `${op} already has an implementation in the ${backend} table${table.module ? ` of ${table.module}` : ""} that this registry did not put there. ` +
            "Pass { override: true } to replace it.";
          if (registration.state !== "failed") registration.state = "refused";
          this.audit.record({ kind: "refused", id, backend, op, code: "ERR_DISPATCH_CONFLICT", message, table: table.id });
          return;
        }
        table.originals.set(opType, original);
      }
      table.adapter.set(table.table, opType, registration.impl);
    } catch (error) {
      registration.state = "failed";
      this.audit.record({ kind: "failed", id, backend, op, table: table.id, module: table.module, error: summarizeError(error) });
      return;
    }
    registration.addTable(table);
    if (registration.state === "pending") registration.state = "applied";
    // seq is set by the log; creating it here keeps every applied event one shape.
    this.audit.record({ kind: "applied", seq: 0, id, backend, op, table: table.id, module: table.module, mechanism });
  }

  #dispose(registration: Registration, reason: "handle" | "restore" | "registry"): void {
    const state = this.#backend(registration.backend);
    const { opType } = registration;
    const wasOwner = state.owners.get(opType) === registration;
    const waiting = state.superseded.get(opType) ?? [];
    const index = waiting.indexOf(registration);
    if (index >= 0) waiting.splice(index, 1);
    registration.state = "disposed";
    this.audit.record({ kind: "disposed", id: registration.id, backend: registration.backend, op: registration.op, reason });
    if (!wasOwner) return;
    state.owners.delete(opType);
    const heir = waiting.pop();
    const tables = registration.tables;
    registration.tables = noTables;
    if (heir !== undefined) {
      // The registration this one replaced comes back, everywhere this one was.
      heir.state = "pending";
      state.owners.set(opType, heir);
      this.audit.record({ kind: "restored", id: heir.id, backend: heir.backend, op: heir.op });
      for (const table of state.tables) state.queue.push({ registration: heir, table, mechanism: "immediate" });
      this.#drain(state);
      return;
    }
    for (const table of tables) this.#putBack(table, opType);
    // A registry with nothing live waits for nothing, so it stops listening.
    if (![...this.#backends.values()].some((b) => b.owners.size > 0)) this.#listen(false);
  }

  /** Restores what a table held for `opType` before the registry wrote it. */
  #putBack(table: Table, opType: Class): void {
    const original = table.originals.get(opType);
    table.originals.delete(opType);
    try {
      if (original !== undefined) table.adapter.set(table.table, opType, original);
      else if (table.adapter.delete !== undefined) table.adapter.delete(table.table, opType);
    } catch {
      // The table refused to give the entry back; the audit still says the registration is disposed.
    }
  }

  #revive(registration: Registration): void {
    const state = this.#backend(registration.backend);
    const owner = state.owners.get(registration.opType);
    if (owner !== undefined && !registration.override) {
      // Something took the op type since; the restored registration waits behind it.
      registration.state = "superseded";
      const waiting = state.superseded.get(registration.opType) ?? [];
      waiting.unshift(registration);
      state.superseded.set(registration.opType, waiting);
      this.audit.record({ kind: "superseded", id: registration.id, backend: registration.backend, op: registration.op, by: owner.id });
      return;
    }
    registration.state = "pending";
    this.audit.record({ kind: "restored", id: registration.id, backend: registration.backend, op: registration.op });
    this.#activate(registration, "immediate");
  }

  #withdraw(table: Table): void {
    const state = this.#backends.get(table.backend);
    if (state === undefined) return;
    const index = state.tables.indexOf(table);
    if (index < 0) return;
    state.tables.splice(index, 1);
    for (const registration of state.owners.values()) {
      if (registration.removeTable(table)) {
        this.#putBack(table, registration.opType);
        if (registration.tables.length === 0 && registration.state === "applied") registration.state = "pending";
      }
    }
    this.audit.record({ kind: "withdrawn", backend: table.backend, table: table.id });
  }

  /**
   * A registry listens while it has a live registration: it waits for a backend, or for another
   * instance of one. When it starts, it asks who remembers tables that appeared before.
   */
  #listen(on: boolean): void {
    if (on === this.#listening) return;
    this.#listening = on;
    for (const [channel, listener] of this.#listeners) {
      if (on) channel.subscribe(listener);
      else channel.unsubscribe(listener);
    }
    if (on && channels.tableQuery.hasSubscribers) {
      const query: TableQueryMessage = { version: 1, answers: [] };
      channels.tableQuery.publish(query);
      for (const notice of query.answers) this.#accept(notice);
    }
  }

  /** A table announced by a loader signal or a native provide() elsewhere in the process. */
  #accept(notice: TableNotice): void {
    let table: unknown;
    try {
      table = notice.via === "hook" ? (notice.namespace as Record<string, unknown>)[notice.exportName] : notice.table;
      this.provide(notice.backend, table, { via: notice.via, ...(notice.module === undefined ? {} : { module: notice.module }) });
    } catch (error) {
      const what = notice.via === "hook" ? `its export ${JSON.stringify(notice.exportName)}` : "the table it provided";
      const reason = error instanceof Error ? error.message : String(error);
      this.audit.record({
        kind: "rejected",
        backend: String(notice.backend),
        module: notice.module,
        message: `${notice.module ?? "a module"} signalled backend ${JSON.stringify(notice.backend)}, but ${what} could not be used: ${reason}`,
      });
    }
  }

  /** Adds to a Dispatcher's miss error what this registry knows about the missed op type. */
  #explainMiss(message: DispatchMissMessage): void {
    const before = message.hints.length;
    this.#explainMissedType(message);
    if (message.hints.length === before || message.backend === undefined) return;
    // Name everything else still waiting on this backend: one miss is rarely alone.
    const waiting = this.pending(message.backend).map((handle) => `${handle.opType.name || "(anonymous)"} (#${handle.id})`);
    if (waiting.length > 1) message.hints.push(`${waiting.length} registrations are pending on ${message.backend}: ${waiting.join(", ")}.`);
  }

  #explainMissedType(message: DispatchMissMessage): void {
    const chain = new Set(message.chain);
    const ours = [...this.#backends.values()].some((b) => b.tables.some((t) => t.table === message.table));
    for (const registration of this.#registrations) {
      if (!chain.has(registration.opType)) continue;
      if (message.backend !== undefined && message.backend !== registration.backend && !ours) continue;
      const state = this.#backend(registration.backend);
      const where = `${registration.op} on ${registration.backend} (registration #${registration.id}${this.#siteOf(registration)})`;
      if (registration.state === "pending") message.hints.push(`${where} is pending: ${this.#whyPending(state, message.table)}`);
      else if (registration.state === "failed") message.hints.push(`${where} failed to apply; see the audit log (registry.verify()).`);
      else if (registration.state === "applied" && !registration.inTable(state.tables.find((t) => t.table === message.table))) {
        message.hints.push(
          `${where} was applied to ${describeTables(state.tables)}, but not to this table, which the registry was never given.`,
        );
      }
    }
  }

  #loaderStatus(): LoaderStatusMessage {
    const status: LoaderStatusMessage = { version: 1, installations: [] };
    if (channels.loaderStatus.hasSubscribers) channels.loaderStatus.publish(status);
    return status;
  }

  #collectLoaderFindings(): void {
    for (const installation of this.#loaderStatus().installations) {
      for (const finding of installation.findings ?? []) {
        const key = `${finding.problem} ${finding.module}`;
        if (this.#findings.has(key)) continue;
        this.#findings.add(key);
        this.audit.record({
          kind: "loader",
          backend: finding.backend,
          module: finding.module,
          problem: finding.problem,
          message: finding.message,
        });
      }
    }
  }

  #whyPending(state: Backend, table: object): string {
    if (state.tables.length > 0) {
      return state.tables.some((t) => t.table === table)
        ? "this table was provided, but applying to it did not succeed."
        : `the ${state.name} table this registry was given (${describeTables(state.tables)}) is another module instance than the one that missed.`;
    }
    const status = this.#loaderStatus();
    const finding = status.installations.flatMap((i) => i.findings ?? []).find((f) => f.backend === state.name);
    if (finding !== undefined) return finding.message;
    if (status.installations.length === 0) {
      return `no ${state.name} table was ever provided, and the dispatch-hook loader is not installed in this thread. Start node with --import dispatch-hook/loader.mjs, or have the framework call provide().`;
    }
    return `no ${state.name} table was ever provided: the loader is installed, but no module declared for ${state.name} signalled that it finished loading. Check the backend's declaration (npx dispatch-hook doctor).`;
  }

  #siteOf(registration: Registration): string {
    const site = registration.requested?.site;
    return site === undefined || site === "unknown" ? "" : `, from ${site}`;
  }
}

function describeTables(tables: readonly Table[]): string {
  return tables.map((t) => t.module ?? `table #${t.id}`).join(", ");
}

/** Creates an isolated registry. */
export function createRegistry(options?: RegistryOptions): Registry {
  return new Registry(options);
}
