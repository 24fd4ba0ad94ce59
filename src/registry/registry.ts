import { frameworkNamespace, type HubMember, type TableNotice } from "../channel.js";
import { hub } from "../hub.js";
import { keyName, noticeTable } from "../table-reads.js";
import type { AuditEvent, AuditLog, AuditReport, RegistrationState, Unsequenced, VerifyOptions } from "./audit-events.js";
import { createAuditLog, frozen, toData } from "./audit-events.js";
import { formatReport } from "./audit-format.js";
import { captureCallSite, formatCallSite } from "./call-site.js";
import type { Class, Impl } from "./dispatcher.js";
import { DispatchHookError } from "./errors.js";
import { auditRunning } from "./exit-audit.js";
import { keepLog, keptKinds } from "./kept-log.js";
import { MissExplainer } from "./miss-explainer.js";
import { checkBackend, checkOptions } from "./options.js";
import { Registration, type RegistrationHandle, type Table, type TableHandle } from "./registration.js";
import { RequestedEvent } from "./registration-events.js";
import type { DeclareOptions, ProvideMeta, RegisterOptions, RegistryOptions, RegistrySnapshot, Request } from "./registry-input.js";
import { admit, checkDeclareInput, checkExpectInput, checkProvideInput, checkRegisterInput, rejection } from "./registry-input.js";
import { adapterFor, type TableAdapter } from "./table-adapter.js";
import { displaced, wrote } from "./table-entries.js";
import { TableWriter } from "./table-writer.js";
import { copyDirectory, isDefault, registryName, registryReport, restoreCopies, throwIfIncomplete, withCopies } from "./thread-audit.js";

export type { HandleState, RegistrationHandle, TableHandle } from "./registration.js";
export type { DeclareOptions, ProvideMeta, RegisterOptions, RegistryOptions, RegistrySnapshot } from "./registry-input.js";

const unsettledStates: ReadonlySet<RegistrationState> = new Set(["pending", "failed", "refused"]); // not landed: a registry holding any is kept alive

export class Registry {
  /** The registry's audit log: read-only, and not replaceable. verify() and the thread's audit read its events, through #member. */
  declare readonly audit: AuditLog;
  readonly #record: (event: Unsequenced<AuditEvent>) => void;
  readonly #registrations: Registration[] = []; // every registration accepted, indexed by id
  readonly #callSites: boolean;
  readonly #member: HubMember; // how the hub knows it (weakly, so it can be collected)
  #joined = false; // whether the hub knows it
  #held = false; // whether the hub holds it strongly now
  readonly #listening = new Set<string>(); // backends whose tables it takes in now (live registrations)
  readonly #misses = new MissExplainer();
  readonly #writer: TableWriter = new TableWriter({
    record: (event) => this.#record(event),
    setState: (registration, next) => this.#setState(registration, next),
    listen: (backend) => this.#listen(backend),
    stopListening: (backend) => this.#listening.delete(backend),
  });
  readonly #disposeHandle = (registration: Registration) => {
    if (registration.state !== "disposed" && !this.#disposed) this.#writer.dispose(registration, "handle");
  };
  #extra: () => readonly AuditEvent[] = () => [];
  #nextId = 0;
  #disposed = false;
  #unsettled = 0; // registrations not landed
  #kept: HubMember | undefined; // its log in the thread's audit, once it recorded a problem or an expectation

  constructor(options: RegistryOptions = {}) {
    checkOptions(options, { callSites: "boolean", name: "string", namespace: "string" }, "createRegistry()");
    this.#callSites = options.callSites ?? auditRunning();
    const { log, events, record } = createAuditLog();
    Object.defineProperty(this, "audit", { value: log, enumerable: true, writable: false, configurable: false });
    this.#record = (event) => {
      record(event);
      // It joined the hub already. A kept log holds call sites as text: a captured stack keeps its frames' functions alive.
      if (keptKinds.has(event.kind) && this.#kept === undefined && !this.#disposed) this.#kept = keepLog(this.#member, events);
      else if (this.#kept !== undefined && event instanceof RequestedEvent) event.callSite = event.site;
    };
    const self = this;
    const own = (options.namespace ?? frameworkNamespace) !== frameworkNamespace; // a backend set's: see MissContext
    this.#member = {
      get isDefault() {
        return isDefault(self);
      },
      namespace: options.namespace ?? frameworkNamespace,
      name: registryName(options.name),
      copy: copyDirectory,
      table: (notice) => this.#accept(notice),
      miss: (miss) => this.#misses.explain(miss, { registrations: this.#registrations, writer: this.#writer, record: this.#record, own }),
      wrote: (table, key, impl) => wrote(this.#writer.backends.values(), table, key, impl),
      events: () => [...events, ...displaced(this.#writer.backends.values()), ...this.#extra()].map(toData),
      snapshot: () => this.#writer.snapshot(this.#registrations), // its own state only (withCopies, in thread-audit.ts)
      restore: (then) => this.#writer.restore((then as RegistrySnapshot) ?? this.#writer.snapshot([], true), this.#registrations),
    };
  }

  /** Registers `impl` for `opType` on `backend`: applied now if its table exists, else when it appears. The handle undoes it. */
  register(backend: string, opType: Class, impl: Impl, options?: RegisterOptions): RegistrationHandle {
    return this.registerFrom(this.register, backend, opType, impl, options);
  }

  /** @internal Registers as `register()` does, with the call site taken above `caller` (or given: a file that declared it). */
  registerFrom(caller: Function | string, backend: string, opType: Class, impl: Impl, options?: RegisterOptions): RegistrationHandle {
    this.#checkOpen("register()");
    const override = checkRegisterInput(backend, opType, impl, options);
    const window = hub().currentWindow();
    const origin = window === undefined ? undefined : { plugin: window.plugin, module: window.module };
    const site = !this.#callSites ? undefined : typeof caller === "string" ? caller : captureCallSite(caller);
    const request: Request = { backend, opType, impl, override, origin, site };
    const state = this.#writer.backends.get(backend);
    const admission = admit(request, state?.sealed === true, state?.owners.get(opType));
    if (admission.action === "refuse") return this.#refuse(admission.code, request, admission.message);
    const registration = this.#accepted(request);
    // Held or let go once its fate is known: one that lands at once never makes the hub hold the registry.
    try {
      if (admission.action === "wait") return this.#writer.wait(registration, admission.owner, admission.note);
      // A plugin's registration module runs because the loader loaded it with its backend: "hook".
      this.#writer.activate(registration, request.origin === undefined ? "immediate" : "hook");
      return registration;
    } finally {
      this.#hold();
    }
  }

  /** Hands it a backend's table: waiting registrations apply now, in order, later ones at once; every table gets every registration. */
  provide(backend: string, table: unknown, meta?: ProvideMeta): TableHandle {
    this.#checkOpen("provide()");
    const { meta: read, adapter: custom } = checkProvideInput(backend, meta);
    return this.#writer.handle(this.#provide(backend, table, read, custom));
  }

  /** provide() with input already checked (a table announced for a backend it listens to): a thousand module instances pay no check. */
  #provide(backend: string, table: unknown, meta: ProvideMeta | undefined, custom?: TableAdapter): Table {
    const adapter = adapterFor(table, backend, custom ?? this.#writer.backends.get(backend)?.adapter);
    this.#join();
    return this.#writer.provide(backend, table as object, adapter, meta);
  }

  /** Declares how to treat a backend's tables before any is provided. */
  declare(backend: string, options: DeclareOptions): void {
    this.#checkOpen("declare()");
    this.#writer.backend(backend).adapter = checkDeclareInput(backend, options);
  }

  /** Names op types that must be registered on `backend`; verify() reports any that never are. */
  expect(backend: string, ops: readonly string[], source?: string): void {
    this.#checkOpen("expect()");
    checkExpectInput(backend, ops, source);
    this.#join();
    this.#writer.expect(backend, ops, source ?? formatCallSite(captureCallSite(this.expect)), hub().currentWindow() === undefined);
  }

  /** @internal A backend set's fact: it knows its backends now ("backend-set"), or it refused a declaration of one ("declaration"). */
  setEvent(event: Unsequenced<Extract<AuditEvent, { kind: "backend-set" | "declaration" }>>): void {
    if (this.#disposed) return;
    this.#join();
    this.#record(event);
  }

  /** @internal Added each time the audit is read, never logged: a backend set's "unresolved" and "declaration" events only (each is a problem). */
  reportWith(extra: () => readonly AuditEvent[]): void {
    this.#extra = () => {
      try {
        return extra().filter((event) => event.kind === "unresolved" || event.kind === "declaration");
      } catch {
        return []; // a thread's audit, read by every copy, never fails for one set
      }
    };
  }

  /** After this, registrations for `backend` are refused with ERR_DISPATCH_SEALED. */
  seal(backend: string): void {
    this.#checkOpen("seal()");
    checkBackend(backend, "seal()");
    const state = this.#writer.backend(backend);
    if (state.sealed) return;
    state.sealed = true;
    this.#record({ kind: "sealed", backend, sealed: true });
  }

  isSealed(backend: string): boolean {
    return this.#writer.backends.get(backend)?.sealed ?? false;
  }

  /** Registrations for `backend` (all backends if omitted) that are still waiting for a table. */
  pending(backend?: string): RegistrationHandle[] {
    return this.#registrations.filter((r) => r.state === "pending" && (backend === undefined || r.backend === backend));
  }

  /** The audit report: every registration with its state, and the problems (a frozen snapshot). Then as a table for people, and as one error listing every problem (ERR_DISPATCH_NO_LOADER or ERR_DISPATCH_INCOMPLETE). */
  verify(options: VerifyOptions = {}): AuditReport {
    return this.#report(options);
  }
  format(options: VerifyOptions = {}): string {
    return formatReport(this.#report(options));
  }
  assertComplete(options: VerifyOptions = {}): void {
    throwIfIncomplete((o) => this.#report(o), options);
  }

  /** Records which registrations are live, which backends are sealed, and which op types are expected (the default registry: of every copy's). */
  snapshot(): RegistrySnapshot {
    this.#checkOpen("snapshot()");
    return withCopies(this, this.#member, this.#writer.snapshot(this.#registrations));
  }

  /** Back to a snapshot: later registrations are disposed (not a plugin module's), disposed ones come back, seals and expect() as they were. */
  restore(snapshot: RegistrySnapshot): void {
    this.#checkOpen("restore()");
    this.#writer.restore(snapshot, this.#registrations);
    restoreCopies(this.#member, snapshot);
  }

  /** Undoes every registration, leaves the thread's audit, and refuses further calls. The audit log stays readable. */
  dispose(): void {
    if (this.#disposed) return;
    for (const registration of this.#registrations.slice().reverse()) {
      if (registration.state !== "disposed") this.#writer.dispose(registration, "registry");
    }
    this.#disposed = true;
    if (this.#joined) hub().leave(this.#member);
    if (this.#kept !== undefined) hub().leave(this.#kept);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  #checkOpen(where: string): void {
    if (!this.#disposed) return;
    const message = `${where}: this registry was disposed. Create a new one with createRegistry().`;
    throw new DispatchHookError("ERR_DISPATCH_REGISTRY_DISPOSED", message);
  }

  #report(options: VerifyOptions): AuditReport {
    const tables = [...this.#writer.backends.values()].flatMap((b) => b.tables);
    return frozen(registryReport(this, this.#member.events() as AuditEvent[], options, tables, this.#member));
  }

  #join(): void {
    if (this.#joined) return;
    this.#joined = true;
    hub().join(this.#member);
  }

  #hold(): void {
    const strong = this.#joined && !this.#disposed && this.#unsettled > 0;
    if (strong === this.#held) return;
    this.#held = strong;
    hub().hold(this.#member, strong);
  }

  #setState(registration: Registration, next: RegistrationState): void {
    const change = Number(unsettledStates.has(next)) - Number(unsettledStates.has(registration.state));
    registration.state = next;
    if (change !== 0) {
      this.#unsettled += change;
      this.#hold();
    }
  }

  /** A new registration, recorded as requested (state pending; not yet the owner of anything). */
  #accepted(request: Request): Registration {
    const { opType, impl, override, origin, site } = request;
    const backend = this.#writer.backend(request.backend).name; // a name computed per call is kept once, not per registration
    const registration = new Registration(this.#nextId++, backend, opType, keyName(opType), impl, override, this.#disposeHandle);
    registration.requested.origin = origin;
    this.#registrations.push(registration);
    registration.requested.callSite = site;
    this.#join();
    this.#record(registration.requested);
    this.#unsettled++; // its caller holds the registry once it knows whether the registration landed
    return registration;
  }

  /**
   * A refusal: a registration of its own, refused, so that the audit shows it and restore() or a handle
   * takes it back. Thrown at the caller; a plugin's declarative one is recorded only (thrown, it would
   * take the framework's backend down with the plugin).
   */
  #refuse(code: "ERR_DISPATCH_SEALED" | "ERR_DISPATCH_CONFLICT", request: Request, message: string): Registration {
    const registration = this.#accepted(request);
    const { backend, op, origin } = registration;
    this.#setState(registration, "refused");
    this.#record({ kind: "refused", id: registration.id, backend, op, code, message, table: undefined, origin });
    if (origin === undefined) throw new DispatchHookError(code, message, { details: { backend, op } });
    return registration;
  }

  /** Takes in the backend's tables while it has live registrations for it; on starting, those that exist. */
  #listen(backend: string): void {
    if (this.#listening.has(backend)) return;
    this.#listening.add(backend);
    this.#join();
    for (const notice of hub().listen(this.#member, backend)) this.#accept(notice);
  }

  /** A table announced in the thread, provided unless withdrawn; one it cannot use is recorded, never thrown into its module. */
  #accept(notice: TableNotice): void {
    if (!this.#listening.has(notice.backend) || this.#disposed) return;
    try {
      const table = noticeTable(notice);
      if (typeof table === "object" && table !== null && this.#writer.withdrawn.has(table)) return;
      this.#provide(notice.backend, table, { via: notice.via, ...(notice.module === undefined ? {} : { module: notice.module }) });
    } catch (error) {
      this.#record({ kind: "rejected", backend: String(notice.backend), module: notice.module, message: rejection(notice, error) });
    }
  }
}

/** Creates an isolated registry. */
export function createRegistry(options?: RegistryOptions): Registry {
  return new Registry(options);
}
