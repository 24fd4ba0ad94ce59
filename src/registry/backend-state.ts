/**
 * One backend inside a registry: its tables, which registration owns each op type (and who waits
 * behind it), the seal, and the queue of (registration, table) pairs still to apply. The queue is
 * drained re-entrancy-safely: a registration made while a table is being filled is applied after
 * the current one, and each pair exactly once.
 */
import type { Mechanism } from "./audit-events.js";
import type { Class } from "./dispatcher.js";
import type { Registration, Table } from "./registration.js";
import type { TableAdapter } from "./table-adapter.js";

interface Job {
  readonly registration: Registration;
  readonly table: Table;
  readonly mechanism: Mechanism;
}

export class BackendState {
  readonly tables: Table[] = [];
  /** The live registration per op type. */
  readonly owners = new Map<Class, Registration>();
  /** Registrations waiting behind an owner, newest last: they come back when it goes. */
  readonly #waiting = new Map<Class, Registration[]>();
  sealed = false;
  adapter: TableAdapter | undefined;
  readonly #queue: Job[] = [];
  #draining = false;

  constructor(readonly name: string) {}

  /** The live registrations, oldest first. */
  live(): Registration[] {
    const live = [...this.owners.values()];
    // The map is in registration order unless an heir or a restored registration came back later.
    for (let i = 1; i < live.length; i++) {
      if ((live[i] as Registration).id < (live[i - 1] as Registration).id) return live.sort((a, b) => a.id - b.id);
    }
    return live;
  }

  /** Puts `registration` behind the owner of its op type; `first` puts it at the back of the line. */
  wait(registration: Registration, first = false): void {
    const line = this.#waiting.get(registration.opType) ?? [];
    if (first) line.unshift(registration);
    else line.push(registration);
    this.#waiting.set(registration.opType, line);
  }

  /** Removes `registration` from the waiting line of its op type. */
  unwait(registration: Registration): void {
    const line = this.#waiting.get(registration.opType);
    const index = line?.indexOf(registration) ?? -1;
    if (index >= 0) line?.splice(index, 1);
  }

  /** The newest registration waiting for `opType`, taken out of the line. */
  heir(opType: Class): Registration | undefined {
    return this.#waiting.get(opType)?.pop();
  }

  enqueue(registration: Registration, table: Table, mechanism: Mechanism): void {
    this.#queue.push({ registration, table, mechanism });
  }

  /** Queues `registration` for every table of the backend. */
  enqueueEverywhere(registration: Registration, mechanism: Mechanism): void {
    for (const table of this.tables) this.#queue.push({ registration, table, mechanism });
  }

  drain(apply: (registration: Registration, table: Table, mechanism: Mechanism) => void): void {
    if (this.#draining) return;
    this.#draining = true;
    try {
      for (let i = 0; i < this.#queue.length; i++) {
        const { registration, table, mechanism } = this.#queue[i] as Job;
        if (this.owners.get(registration.opType) !== registration || registration.inTable(table)) continue;
        if (!this.tables.includes(table)) continue;
        apply(registration, table, mechanism);
      }
    } finally {
      this.#queue.length = 0;
      this.#draining = false;
    }
  }
}
