/** How a registry writes into tables, each step audited: owners applied through each table's adapter (an entry it did
 * not put there is refused unless overridden), disposed with what the table held put back, revived by restore(), and a
 * withdrawn table's entries taken out. It holds the registry's backends. */
import { summarizeError } from "../channel.js";
import type { AuditEvent, Mechanism, RegistrationState, Unsequenced } from "./audit-events.js";
import { getOrCreate } from "./audit-fold.js";
import { backendDispatchers } from "./backend-dispatchers.js";
import type { Class, Impl } from "./dispatcher.js";
import { DispatchHookError } from "./errors.js";
import { BackendState, entered, enterIn, type Registration, type Table, type TableHandle } from "./registration.js";
import { AppliedEvent } from "./registration-events.js";
import type { ProvideMeta, RegistrySnapshot } from "./registry-input.js";
import type { TableAdapter } from "./table-adapter.js";
import { CANNOT_SAY, enter, held, KEEP, leave, lookUp, overwritten, type Show, shown, shows } from "./table-entries.js";

interface WriterHost {
  record(event: Unsequenced<AuditEvent>): void;
  setState(registration: Registration, next: RegistrationState): void;
  /** Starts listening for the backend's tables, and learns those that exist already. */
  listen(backend: string): void;
  stopListening(backend: string): void;
}

export class TableWriter {
  readonly backends = new Map<string, BackendState>();
  readonly withdrawn = new WeakSet<object>(); // tables withdrawn with their handle: announcements of them are not accepted again
  readonly #snapshots = new WeakSet<RegistrySnapshot>();
  #nextTable = 0;
  /**
   * A table user code dropped is forgotten, not withdrawn: what landed in it landed (the audit keeps
   * saying so, and a registration stays applied), and nothing can dispatch on it any more.
   */
  readonly #collected = new FinalizationRegistry<Table>((entry) => {
    const state = this.backends.get(entry.backend);
    if (state?.remove(entry)) for (const registration of state.owners.values()) registration.removeTable(entry);
  });

  constructor(private readonly host: WriterHost) {}

  /** The backend's state, created on first use. */
  backend(name: string): BackendState {
    return getOrCreate(this.backends, name, () => new BackendState(name));
  }

  /** Puts an accepted registration behind the current owner of its op type. */
  wait(registration: Registration, owner: Registration, note: string): Registration {
    this.host.setState(registration, "superseded");
    this.backend(registration.backend).wait(registration, true);
    this.host.record({ kind: "superseded", id: registration.id, backend: registration.backend, op: registration.op, by: owner.id, note });
    return registration;
  }

  /** Makes a registration the owner of its op type and queues it for every table. */
  activate(registration: Registration, mechanism: Mechanism): void {
    // Learn of existing tables first, so that a registration made after its table appeared is audited as immediate.
    this.host.listen(registration.backend);
    const state = this.backend(registration.backend);
    const previous = state.owners.get(registration.opType);
    if (previous !== undefined) {
      // Only reachable with override: the previous owner steps aside until this one is disposed.
      this.host.setState(previous, "superseded");
      previous.takeTables();
      state.wait(previous);
      this.host.record({ kind: "superseded", id: previous.id, backend: previous.backend, op: previous.op, by: registration.id });
    }
    state.owners.set(registration.opType, registration);
    state.enqueueEverywhere(registration, mechanism);
    state.drain(this.apply);
  }

  readonly apply = (registration: Registration, table: Table, mechanism: Mechanism): void => {
    const { backend, op, opType, id } = registration;
    let write: Show | typeof KEEP = KEEP;
    let again = false;
    try {
      const target = table.ref.deref();
      if (target === undefined) return;
      again = entered(table, opType);
      // A get() that throws is a table fault: the registration fails, and nothing is overwritten blind.
      const current = table.adapter.get(target, opType);
      if (!again) {
        if (current !== undefined && !registration.override) {
          const message =
            `${op} already has an implementation in the ${backend} table${table.module ? ` of ${table.module}` : ""} that this registry did not put there. ` +
            "Pass { override: true } to replace it.";
          if (registration.state !== "failed") this.host.setState(registration, "refused");
          this.host.record({
            kind: "refused",
            id,
            backend,
            op,
            code: "ERR_DISPATCH_CONFLICT",
            message,
            table: table.id,
            origin: registration.origin,
          });
          return;
        }
        enterIn(table, opType, true);
      }
      // Of live entries of several registries, the newest registration's is written (table-entries.ts).
      write = enter(target, opType, backend, { key: table, seq: registration.seq, impl: registration.impl }, current, again);
      if (write !== KEEP) this.#show(table, target, opType, write);
    } catch (error) {
      // Not in the order of entries, and the op type not the registry's there: the table never held it.
      const target = table.ref.deref();
      if (target !== undefined) leave(target, opType, table, CANNOT_SAY, CANNOT_SAY);
      if (!again) enterIn(table, opType, false);
      this.host.setState(registration, "failed");
      this.host.record({ kind: "failed", id, backend, op, table: table.id, module: table.module, error: summarizeError(error) });
      return;
    }
    if (write === KEEP || write.to !== table) table.landed?.delete(opType); // behind a newer entry: nothing to read back
    registration.addTable(table);
    if (registration.state === "pending") this.host.setState(registration, "applied");
    this.host.record(new AppliedEvent(registration.requested, table.id, table.module, mechanism));
  };

  dispose(registration: Registration, reason: "handle" | "restore" | "registry"): void {
    const state = this.backend(registration.backend);
    const { opType } = registration;
    const wasOwner = state.owners.get(opType) === registration;
    state.unwait(registration);
    this.host.setState(registration, "disposed");
    this.host.record({ kind: "disposed", seq: 0, id: registration.id, backend: registration.backend, op: registration.op, reason });
    if (!wasOwner) return;
    state.owners.delete(opType);
    const heir = state.heir(opType);
    const tables = registration.takeTables();
    // A table whose entry code around the registry wrote over is no longer the registry's there.
    for (const table of tables) if (overwritten(table, registration)) enterIn(table, opType, false);
    if (heir !== undefined) {
      // The registration this one replaced comes back, everywhere this one was.
      this.host.setState(heir, "pending");
      state.owners.set(opType, heir);
      this.host.record({ kind: "restored", id: heir.id, backend: heir.backend, op: heir.op });
      state.enqueueEverywhere(heir, "immediate");
      state.drain(this.apply);
      return;
    }
    for (const table of tables) this.#putBack(table, registration);
    if (state.owners.size === 0) this.host.stopListening(state.name);
  }

  /**
   * Makes the table hold what the order of entries asks for (table-entries.ts), and keeps what it gives
   * back: for the order, and for the registry whose entry it is, where that is not the implementation
   * itself (a table that wraps it, or cannot say: see displaced()).
   */
  #show(table: Table, target: object, opType: Class, show: Show): void {
    if (show.value !== undefined) table.adapter.set(target, opType, show.value as Impl);
    else if (table.adapter.delete !== undefined) table.adapter.delete(target, opType);
    else throw new DispatchHookError("ERR_DISPATCH_TABLE_SHAPE", "the table has no delete() or unregister() to take an entry out");
    shown(target, opType, table);
    const to = show.to as Table | undefined;
    if (to === undefined) return;
    const now = held(table, opType);
    if (now === show.value) to.landed?.delete(opType);
    else {
      to.landed ??= new Map();
      to.landed.set(opType, now);
    }
  }

  /** Takes the registry's entry out of a table: where it was the newest, the next newest goes back in, or what the table held before. */
  #putBack(table: Table, registration: Registration): void {
    const { opType } = registration;
    const target = table.ref.deref();
    const mine = shows(table, registration);
    enterIn(table, opType, false);
    table.landed?.delete(opType);
    if (target === undefined) return;
    const next = leave(target, opType, table, lookUp(table, opType), mine);
    if (next === KEEP) return;
    try {
      this.#show(table, target, opType, next);
    } catch (error) {
      // The table refused to give the entry back: the implementation is still in it. Say so.
      const { id, backend, op } = registration;
      this.host.record({ kind: "stuck", id, backend, op, table: table.id, module: table.module, error: summarizeError(error) });
    }
  }

  revive(registration: Registration): void {
    const state = this.backend(registration.backend);
    const owner = state.owners.get(registration.opType);
    if (owner !== undefined && !registration.override) {
      this.wait(registration, owner, "restored behind the registration that took its place"); // something took the op type since
      return;
    }
    this.host.setState(registration, "pending");
    this.host.record({ kind: "restored", id: registration.id, backend: registration.backend, op: registration.op });
    this.activate(registration, "immediate");
  }

  withdraw(table: Table): void {
    const state = this.backends.get(table.backend);
    if (state === undefined || !state.remove(table)) return;
    const target = table.ref.deref();
    if (target !== undefined) this.withdrawn.add(target);
    for (const registration of state.owners.values()) {
      if (registration.removeTable(table)) {
        this.#putBack(table, registration);
        if (registration.tableCount === 0 && registration.state === "applied") this.host.setState(registration, "pending");
      }
    }
    this.host.record({ kind: "withdrawn", backend: table.backend, table: table.id });
  }

  /** Takes a table in, once: attached to its backend, audited, every live registration applied to it. */
  provide(backend: string, table: object, adapter: TableAdapter, meta: ProvideMeta | undefined): Table {
    const state = this.backend(backend);
    const known = state.table(table);
    if (known !== undefined) return known;
    this.withdrawn.delete(table);
    const id = this.#nextTable++;
    const entry: Table = {
      id,
      backend: state.name,
      ref: new WeakRef(table),
      adapter,
      module: meta?.module,
      mechanism: meta?.via ?? "native",
      entered: undefined,
    };
    state.add(entry, table);
    this.#collected.register(table, entry);
    backendDispatchers().forget(table);
    this.host.record({
      kind: "provided",
      seq: 0,
      backend: state.name,
      table: id,
      tableKind: adapter.kind ?? "custom",
      module: entry.module,
      mechanism: entry.mechanism,
    });
    for (const registration of state.live()) state.enqueue(registration, entry, entry.mechanism);
    state.drain(this.apply);
    return entry;
  }

  /** The handle of a table it was given (one handle per table, made when first asked for). */
  handle(entry: Table): TableHandle {
    const dispose = () => this.withdraw(entry);
    entry.handle ??= { id: entry.id, backend: entry.backend, dispose, [Symbol.dispose]: dispose };
    return entry.handle;
  }

  /**
   * Op types that must be registered on `backend` (registry.expect()). `undoable`: made outside a
   * plugin's registration module, which runs once, so that restore() never takes back what it expects.
   */
  expect(backend: string, ops: readonly string[], source: string, undoable: boolean): void {
    if (undoable) for (const op of ops) this.backend(backend).expected.set(op, source);
    this.host.record({ kind: "expected", backend, ops: [...ops], source });
  }

  /** Which registrations are live, which backends sealed, which op types expected: now, or (`made`) none, as the registry was made. */
  snapshot(registrations: readonly Registration[], made = false): RegistrySnapshot {
    const ids = (keep: (r: Registration) => boolean) => new Set(registrations.filter((r) => !made && keep(r)).map((r) => r.id));
    const live = ids((r) => r.state !== "disposed" && r.state !== "refused");
    const refused = ids((r) => r.state === "refused");
    const backends = made ? [] : [...this.backends.values()];
    const sealed = new Set(backends.filter((b) => b.sealed).map((b) => b.name));
    const expected = new Map(backends.map((b) => [b.name, new Map(b.expected)]));
    const snapshot: RegistrySnapshot = Object.freeze({ live, refused, sealed, expected });
    this.#snapshots.add(snapshot);
    return snapshot;
  }

  /** Returns to a snapshot it took: later registrations disposed, disposed ones back in every table, seals as they were. */
  restore(snapshot: RegistrySnapshot, registrations: readonly Registration[]): void {
    if (!this.#snapshots.has(snapshot)) {
      throw new DispatchHookError("ERR_DISPATCH_INVALID_SNAPSHOT", "restore() needs a snapshot taken from this registry with snapshot().");
    }
    for (const registration of registrations.slice().reverse()) {
      // A plugin's registration module ran once, for an instance that stays loaded: what it registered stays.
      if (registration.origin !== undefined) continue;
      const then = snapshot.live.has(registration.id) || snapshot.refused.has(registration.id);
      if (!then && registration.state !== "disposed") this.dispose(registration, "restore");
    }
    for (const registration of registrations) {
      if (snapshot.live.has(registration.id) && registration.state === "disposed") this.revive(registration);
    }
    for (const state of this.backends.values()) {
      const sealed = snapshot.sealed.has(state.name);
      if (state.sealed !== sealed) {
        state.sealed = sealed;
        this.host.record({ kind: "sealed", backend: state.name, sealed });
      }
      // What was expected since is taken back; what was expected then comes back, each where it was.
      const then = snapshot.expected.get(state.name) ?? new Map<string, string>();
      const since = [...state.expected.keys()].filter((op) => !then.has(op));
      for (const op of since) state.expected.delete(op);
      if (since.length > 0) this.host.record({ kind: "expectation-withdrawn", backend: state.name, ops: since });
      for (const [op, source] of then) if (!state.expected.has(op)) this.expect(state.name, [op], source, true);
    }
  }
}
