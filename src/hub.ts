/**
 * The hub: where the tables, registries, windows and loaders of every copy in a thread and realm meet
 * (found with one handshake, channel.ts). Indexed so that an event costs what it touches. Tables are
 * held weakly; registries weakly, strongly while work has not landed; windows while their table lives.
 */
import { asyncHooks } from "./builtins.js";
import {
  connect,
  type DispatchMiss,
  type HubApi,
  type HubLoader,
  type HubMember,
  hubVersion,
  type InstallationStatus,
  logChangesKey,
  type TableNotice,
  type WindowFact,
  type WindowInfo,
} from "./channel.js";

import { attempt, type MemberRecord, memberRecord, notice, recordOf, slotOf, type TableRecord, type WindowRecord } from "./hub-records.js";

class Hub implements HubApi {
  readonly versions: readonly number[] = [hubVersion];
  readonly #tables = new Map<string, Set<TableRecord>>();
  // Hook tables by module URL: a record keeps no string of its own, and a lookup builds no key.
  readonly #byModule = new Map<string, TableRecord>();
  readonly #byExport = new Map<string, TableRecord>(); // a second export of a module, by URL and export
  readonly #tableGone = new FinalizationRegistry<TableRecord>((record) => this.#retire(record));
  readonly #members = new Set<MemberRecord>();
  readonly #listeners = new Map<string, Set<MemberRecord>>();
  readonly #strong = new Set<HubMember>();
  readonly #memberGone = new FinalizationRegistry<MemberRecord>((record) => this.#forget(record));
  readonly #loaders = new Set<HubLoader>();
  readonly #windows = new Map<string, WindowRecord>();
  readonly #windowGone = new FinalizationRegistry<WindowRecord>((record) => this.#dropWindow(record));
  #live = 0; // windows open or awaiting: while there are any, the storage is on
  #storage: import("node:async_hooks").AsyncLocalStorage<WindowFact | undefined> | undefined;
  #hosted: WindowFact | undefined; // the window a host's generated code entered last (see enterWindow)
  #exitClaimed = false;
  readonly #shared = new Map<string, unknown>();
  readonly #refused = new Set<string>();

  announce(incoming: TableNotice): void {
    const target = incoming.via === "hook" ? incoming.exports : incoming.table;
    if ((typeof target !== "object" && typeof target !== "function") || target === null) return;
    const slot = slotOf(incoming.namespace, incoming.backend);
    const older = incoming.via === "hook" ? this.#moduleRecord(incoming.module, incoming.exportName) : undefined;
    if (older !== undefined && older.ref.deref() === target) return;
    if (incoming.via === "native") for (const r of this.#tables.get(slot) ?? []) if (r.ref.deref() === target) return;
    if (older !== undefined) this.#retire(older);
    const record: TableRecord = {
      via: incoming.via,
      namespace: incoming.namespace,
      backend: incoming.backend,
      module: incoming.module,
      exportName: incoming.via === "hook" ? incoming.exportName : "",
      host: incoming.via === "hook" ? incoming.host : undefined,
      ref: new WeakRef(target),
    };
    this.#tables.set(slot, (this.#tables.get(slot) ?? new Set<TableRecord>()).add(record));
    const module = record.module ?? "";
    if (record.via === "hook" && this.#byModule.has(module)) this.#byExport.set(`${module}\0${record.exportName}`, record);
    else if (record.via === "hook") this.#byModule.set(module, record);
    this.#tableGone.register(target, record);
    const told = notice(record, target);
    for (const listener of this.#listeners.get(slot) ?? []) {
      const member = listener.ref.deref();
      // A registry never throws into the module that announced: it records its own failures. (No closure per notice: attempt() costs an instance 2 K instructions.)
      if (member !== undefined)
        try {
          member.table(told);
        } catch {}
    }
    this.#changed();
  }

  /** What a worker's running record waits for (worker-record.ts): a table loaded, a window settled, a log changed. */
  #changes: { changed?: () => void } | undefined; // hub.shared(logChangesKey), kept at hand: a Map lookup per instance costs 1 K instructions
  #changed(): void {
    this.#changes?.changed?.();
  }

  allTables(): TableNotice[] {
    return [...this.#tables.values()].flatMap((set) => this.#live_(set));
  }

  #live_(set: Set<TableRecord> | undefined): TableNotice[] {
    return [...(set ?? [])].flatMap((record) => {
      const target = record.ref.deref();
      return target === undefined ? [] : [notice(record, target)];
    });
  }

  #moduleRecord(module: string, exportName: string): TableRecord | undefined {
    const there = this.#byModule.get(module);
    if (there?.exportName === exportName) return there;
    return this.#byExport.size === 0 ? undefined : this.#byExport.get(`${module}\0${exportName}`);
  }

  #retire(record: TableRecord): void {
    const slot = slotOf(record.namespace, record.backend);
    const set = this.#tables.get(slot);
    set?.delete(record);
    if (set?.size === 0) this.#tables.delete(slot);
    const module = record.module ?? "";
    if (this.#byModule.get(module) === record) this.#byModule.delete(module);
    else if (this.#byExport.get(`${module}\0${record.exportName}`) === record) this.#byExport.delete(`${module}\0${record.exportName}`);
    if (record.via === "hook") for (const loader of this.#loaders) attempt(() => loader.signalled?.(module)); // it did finish (no cost per instance)
  }

  join(member: HubMember): MemberRecord {
    let record = recordOf(member);
    if (record !== undefined) return record;
    record = { ref: new WeakRef(member), slots: [] };
    // On the member itself: a WeakMap's table keeps the size of its busiest moment after its keys die.
    Object.defineProperty(member, memberRecord, { value: record, configurable: true });
    this.#members.add(record);
    // No unregister token: a weak table of tokens would outgrow the members it tracks.
    this.#memberGone.register(member, record);
    return record;
  }

  listen(member: HubMember, backend: string): TableNotice[] {
    const record = this.join(member);
    const slot = slotOf(member.namespace, backend);
    const set = this.#listeners.get(slot) ?? this.#listeners.set(slot, new Set<MemberRecord>()).get(slot)!;
    if (!set.has(record)) {
      set.add(record);
      record.slots.push(slot);
    }
    return this.#live_(this.#tables.get(slot));
  }

  hold(member: HubMember, strong: boolean): void {
    strong ? this.#strong.add(member) : this.#strong.delete(member);
  }

  leave(member: HubMember): void {
    const record = recordOf(member);
    this.#strong.delete(member);
    if (record === undefined) return;
    delete (member as { [memberRecord]?: MemberRecord })[memberRecord];
    this.#forget(record);
  }

  #forget(record: MemberRecord): void {
    this.#members.delete(record);
    for (const slot of record.slots) {
      const set = this.#listeners.get(slot);
      set?.delete(record);
      if (set?.size === 0) this.#listeners.delete(slot);
    }
    record.slots.length = 0;
  }

  members(): HubMember[] {
    return [...this.#members].flatMap((record) => record.ref.deref() ?? []);
  }

  #concerned(backend: string | undefined): HubMember[] {
    if (backend === undefined) return this.members();
    const records = new Set<MemberRecord>();
    for (const [slot, set] of this.#listeners) if (slot.endsWith(`\0${backend}`)) for (const record of set) records.add(record);
    return [...records].flatMap((record) => record.ref.deref() ?? []);
  }

  addLoader(loader: HubLoader): () => void {
    this.#loaders.add(loader);
    return () => this.#loaders.delete(loader);
  }

  loaders(): InstallationStatus[] {
    return [...this.#loaders].map((loader) => loader.status());
  }

  hasLoader(): boolean {
    return this.#loaders.size > 0;
  }

  miss(miss: DispatchMiss): void {
    for (const member of this.#concerned(miss.backend)) attempt(() => member.miss(miss));
    for (const loader of this.#loaders) attempt(() => loader.miss(miss));
  }

  wrote(table: object, key: Function | string, impl: unknown, backend: string): unknown {
    return this.#concerned(backend).reduce<unknown>((found, member) => found || member.wrote(table, key, impl), false);
  }

  openWindow(fact: WindowFact, table: object | undefined, enter: boolean, hosted = false): void {
    const live = fact.state === "open" || fact.state === "awaiting";
    const older = this.#windows.get(fact.info.id);
    if (older !== undefined) this.#dropWindow(older);
    const record: WindowRecord = { fact, table: table === undefined ? undefined : new WeakRef(table), live };
    this.#windows.set(fact.info.id, record);
    if (table !== undefined) this.#windowGone.register(table, record);
    if (live) this.#live++;
    if (enter) this.enterWindow(fact, hosted);
  }

  enterWindow(fact: WindowFact | undefined, hosted = false): void {
    if (hosted) this.#hosted = fact;
    if (fact === undefined && (this.#storage === undefined || this.#live === 0)) return;
    this.#storage ??= new (asyncHooks().AsyncLocalStorage)();
    this.#storage.enterWith(fact);
  }

  settleWindow(fact: WindowFact): void {
    const record = this.#windows.get(fact.info.id);
    if (record === undefined || record.fact !== fact || !record.live) return;
    record.live = false;
    if (this.#hosted === fact) this.#hosted = undefined;
    if (fact.state === "done") for (const loader of this.#loaders) loader.ran?.(fact.info.module);
    // With no window left to attribute to, the storage stops (on Node 20 that turns its async hooks off).
    if (--this.#live === 0) this.#storage?.disable();
    this.#changed();
  }

  window(id: string): WindowFact | undefined {
    const record = this.#windows.get(id);
    if (record?.table === undefined || record.table.deref() !== undefined) return record?.fact;
    this.#dropWindow(record);
    return undefined;
  }

  /** Its table is gone, or a newer instance took its id: the window goes, and stops keeping the storage on. */
  #dropWindow(record: WindowRecord): void {
    if (this.#windows.get(record.fact.info.id) !== record) return;
    if (record.live) this.settleWindow(record.fact);
    this.#windows.delete(record.fact.info.id);
  }

  currentWindow(): WindowInfo | undefined {
    if (this.#live === 0) return undefined;
    const fact = this.#storage?.getStore() ?? this.#hosted;
    if (fact === undefined) return undefined;
    // "failed" with no error: presumed failed because it was still running when its job ended, which a
    // host that evaluates modules asynchronously (Vite's module runner) does; it may still be running.
    const running = fact.state === "open" || fact.state === "awaiting" || (fact.state === "failed" && fact.error === undefined);
    return running ? fact.info : undefined;
  }

  windows(): WindowFact[] {
    return [...this.#windows.keys()].flatMap((id) => this.window(id) ?? []);
  }

  claimExit(): boolean {
    const first = !this.#exitClaimed;
    this.#exitClaimed = true;
    return first;
  }

  refuse(note: string): void {
    this.#refused.add(note);
    this.#changed();
  }

  refusals(): string[] {
    return [...this.#refused];
  }

  shared<T>(key: string, create: () => T): T {
    if (!this.#shared.has(key)) this.#shared.set(key, create());
    if (key === logChangesKey) this.#changes = this.#shared.get(key) as { changed?: () => void };
    return this.#shared.get(key) as T;
  }
}

/** This thread's hub, found or made on first use. */
export function hub(): HubApi {
  return connect(() => new Hub());
}
