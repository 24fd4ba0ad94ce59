import { type DispatchMiss, frameworkNamespace, type HubMember, type TableNotice } from "../channel.js";
import { hub } from "../hub.js";
import { noticeTable } from "../table-entries.js";
import { admit, type Request } from "./admission.js";
import type { AuditEvent, AuditReport, RegistrationState, Unsequenced, VerifyOptions } from "./audit-events.js";
import { type AuditLog, createAuditLog } from "./audit-log.js";
import { BackendState } from "./backend-state.js";
import { auditRunning, captureCallSite, formatCallSite } from "./call-site.js";
import type { Class, Impl } from "./dispatcher.js";
import { DispatchHookError } from "./errors.js";
import { MissExplainer } from "./miss-explainer.js";
import { checkBackend } from "./names.js";
import { checkOptions } from "./options.js";
import { Registration, type RegistrationHandle, RequestedEvent, type TableHandle } from "./registration.js";
import { copyDirectory, isDefault, registryName } from "./registry-identity.js";
import type { DeclareOptions, ProvideMeta, RegisterOptions, RegistryOptions, RegistrySnapshot } from "./registry-input.js";
import { checkExpectInput, checkRegisterInput, opName } from "./registry-input.js";
import { adapterFor, checkAdapter } from "./table-adapter.js";
import { TableWriter } from "./table-writer.js";
import { registryReport } from "./thread-audit.js";

export type { HandleState, RegistrationHandle, TableHandle } from "./registration.js";
export type { DeclareOptions, ProvideMeta, RegisterOptions, RegistryOptions, RegistrySnapshot } from "./registry-input.js";

const snapshots = new WeakMap<RegistrySnapshot, Registry>();
/** Registration states that have not landed: a registry holding any is kept alive. */
const unsettledStates: ReadonlySet<RegistrationState> = new Set(["pending", "failed", "refused"]);
export class Registry {
  readonly audit: AuditLog;
  readonly #record: (event: Unsequenced<AuditEvent>) => void;
  readonly #backends = new Map<string, BackendState>();
  /** Every registration ever accepted, indexed by id (ids are sequential). */
  readonly #registrations: Registration[] = [];
  readonly #callSites: boolean;
  readonly #name: string;
  readonly #namespace: string;
  /** How the hub knows this registry: it holds the member weakly, so the registry can be collected. */
  readonly #member: HubMember;
  #joined = false;
  /** Whether the hub holds it strongly now. */
  #held = false;
  /** Backends whose tables it takes in now: those with live registrations. */
  readonly #listening = new Set<string>();
  readonly #misses = new MissExplainer();
  /** Tables withdrawn with their handle: announcements of them are not accepted again. */
  readonly #withdrawn = new WeakSet<object>();
  readonly #writer: TableWriter = new TableWriter({
    record: (event) => this.#record(event),
    setState: (registration, next) => this.#setState(registration, next),
    backend: (name) => this.#backend(name),
    existing: (name) => this.#backends.get(name),
    backends: () => this.#backends.values(),
    listen: (backend) => this.#listen(backend),
    stopListening: (backend) => this.#listening.delete(backend),
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
    checkOptions(options, { callSites: "boolean", name: "string", namespace: "string" }, "createRegistry()");
    this.#callSites = options.callSites ?? auditRunning();
    this.#name = registryName(options.name);
    this.#namespace = options.namespace ?? frameworkNamespace;
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
    this.#member = Registry.#memberOf(this, this.#namespace, this.#name);
  }

  /**
   * Registers `impl` for `opType` on `backend`. If the backend's table exists it is applied now;
   * otherwise it waits for the table. Returns a handle that undoes it.
   */
  register(backend: string, opType: Class, impl: Impl, options?: RegisterOptions): RegistrationHandle {
    return this.registerFrom(this.register, backend, opType, impl, options);
  }

  /** @internal Registers as `register()` does, with the call site taken above `caller`. */
  registerFrom(caller: Function, backend: string, opType: Class, impl: Impl, options?: RegisterOptions): RegistrationHandle {
    this.#checkOpen("register()");
    checkRegisterInput(backend, opType, impl, options);
    const window = hub().currentWindow();
    const request: Request = {
      backend,
      opType,
      impl,
      override: options?.override === true,
      origin: window === undefined ? undefined : { plugin: window.plugin, module: window.module },
      site: this.#callSites ? captureCallSite(caller) : undefined,
    };
    const state = this.#backends.get(backend);
    const admission = admit(request, state?.sealed === true, state?.owners.get(opType));
    if (admission.action === "refuse") return this.#refuse(admission.code, request, admission.message);
    if (admission.action === "wait") return this.#writer.wait(this.#accepted(request), admission.owner, admission.note);
    const registration = this.#accepted(request);
    // A plugin's registration module runs because the loader loaded it with its backend: "hook".
    this.#writer.activate(registration, request.origin === undefined ? "immediate" : "hook");
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
    this.#join();
    const state = this.#backend(backend);
    const known = state.tables.find((t) => t.table === table);
    if (known !== undefined) return known.handle;
    this.#withdrawn.delete(table as object);
    return this.#writer.attach(state, this.#nextTable++, table as object, adapter, meta);
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
    checkExpectInput(backend, ops, source);
    this.#join();
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
    this.#writer.restore(snapshot, this.#registrations);
  }

  /** Undoes every registration, leaves the thread's audit, and refuses further calls. The audit log stays readable. */
  dispose(): void {
    if (this.#disposed) return;
    for (const registration of this.#registrations.slice().reverse()) {
      if (registration.state !== "disposed") this.#writer.dispose(registration, "registry");
    }
    this.#disposed = true;
    if (this.#joined) hub().leave(this.#member);
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
    const own = [...this.#backends.values()].flatMap((b) => b.tables);
    return registryReport(
      events,
      options,
      own,
      (loaders) => loaders.some((l) => l.registry === this) || (loaders.length === 0 && isDefault(this)),
    );
  }

  #join(): void {
    if (this.#joined) return;
    this.#joined = true;
    hub().join(this.#member);
  }

  #hold(): void {
    const strong = this.#joined && !this.#disposed && this.#unsettled + this.#sticky > 0;
    if (strong === this.#held) return;
    this.#held = strong;
    hub().hold(this.#member, strong);
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
  #accepted(request: Request): Registration {
    const { backend, opType, impl, override, origin, site } = request;
    const registration = new Registration(this.#nextId++, backend, opType, opName(opType), impl, override, this.#disposeHandle);
    registration.origin = origin;
    this.#registrations.push(registration);
    registration.requested = new RequestedEvent(registration, site);
    this.#join();
    this.#record(registration.requested);
    this.#unsettled++;
    this.#hold();
    return registration;
  }

  /** A refusal: thrown at the caller, or, for a plugin's declarative registration, recorded and returned. */
  #refuse(code: "ERR_DISPATCH_SEALED" | "ERR_DISPATCH_CONFLICT", request: Request, message: string): Registration {
    const { backend, opType, origin } = request;
    if (origin === undefined) {
      this.#join();
      this.#record({ kind: "refused", id: undefined, backend, op: opName(opType), code, message, table: undefined });
      throw new DispatchHookError(code, message, { details: { backend, op: opName(opType) } });
    }
    // Thrown here, it would take the framework's backend down with the plugin.
    const registration = this.#accepted(request);
    this.#setState(registration, "refused");
    this.#record({ kind: "refused", id: registration.id, backend, op: registration.op, code, message, table: undefined, origin });
    return registration;
  }

  /** Takes in the backend's tables while it has live registrations for it; on starting, those that exist. */
  #listen(backend: string): void {
    if (this.#listening.has(backend)) return;
    this.#listening.add(backend);
    this.#join();
    for (const notice of hub().listen(this.#member, backend)) this.#accept(notice);
  }

  /**
   * A table announced in the thread (a loader's signal, or a framework's native provide()): provided
   * to this registry unless it was withdrawn with its handle. An export that is not a table the
   * registry can use is recorded as rejected, never thrown into the module that announced it.
   */
  #accept(notice: TableNotice): void {
    if (!this.#listening.has(notice.backend) || this.#disposed) return;
    try {
      const table = noticeTable(notice);
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

  #explainMiss(miss: DispatchMiss): void {
    this.#misses.explain(miss, { registrations: this.#registrations, backend: (name) => this.#backend(name), record: this.#record });
  }

  /** What the hub calls: a separate object, so that these stay off the public class. */
  static #memberOf(registry: Registry, namespace: string, name: string): HubMember {
    return {
      namespace,
      name,
      copy: copyDirectory,
      table: (notice) => registry.#accept(notice),
      miss: (miss) => registry.#explainMiss(miss),
      wrote: (table, key, impl) => registry.#writer.wrote(table, key, impl),
      events: () => registry.audit.events(),
    };
  }
}

/** Creates an isolated registry. */
export function createRegistry(options?: RegistryOptions): Registry {
  return new Registry(options);
}
