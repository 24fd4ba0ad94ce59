/**
 * What a registry's tables hold of what it wrote, asked when it matters: by a window (did the
 * registry write exactly this entry, or did a plugin write it directly?) and each time the audit is
 * read (does each table still hold what landed in it?).
 */
import { hub } from "../hub.js";
import type { AuditEvent } from "./audit-events.js";
import type { Class, Impl } from "./dispatcher.js";
import type { BackendState, Registration, Table } from "./registration.js";

export const CANNOT_SAY: unique symbol = Symbol("cannot say");

/** What a table holds for an op type: undefined where it holds nothing or is gone; CANNOT_SAY where its get() throws. */
export function lookUp(table: Table, opType: Class): Impl | undefined | typeof CANNOT_SAY {
  const target = table.ref.deref();
  try {
    return target === undefined ? undefined : table.adapter.get(target, opType);
  } catch {
    return CANNOT_SAY;
  }
}

/** What a table holds for an op type, undefined where it cannot say (it holds nothing, is gone, or its get() throws). */
export function held(table: Table, opType: Class): Impl | undefined {
  const now = lookUp(table, opType);
  return now === CANNOT_SAY ? undefined : now;
}

/**
 * Made each time the audit is read: an applied registration whose entry a table no longer holds,
 * overridden by a newer registration of another registry (`overridden`), or replaced or removed by
 * code that went around the registry (`displaced`: a framework filling its defaults late, an unregister()). A table that gave back something else than the implementation right after the
 * write (it wraps, memoizes or binds it) can say only that the entry is gone; one that gave back
 * nothing cannot say anything, and is not asked.
 */
export function displaced(backends: Iterable<BackendState>): AuditEvent[] {
  const out: AuditEvent[] = [];
  for (const state of backends) {
    for (const owner of state.owners.values()) {
      if (owner.state !== "applied") continue;
      for (const table of owner.tables) {
        const target = table.ref.deref();
        const transforms = table.landed?.has(owner.opType) === true;
        const landed = transforms ? table.landed?.get(owner.opType) : owner.impl;
        if (target === undefined || landed === undefined) continue;
        const now = lookUp(table, owner.opType);
        if (now === CANNOT_SAY) continue;
        const { id, backend, op } = owner;
        if (transforms ? now !== undefined : now === landed) continue;
        if (now !== undefined && overriddenBy(target, owner, now))
          out.push({ kind: "overridden", seq: -1, id, backend, op, table: table.id, module: table.module });
        else out.push({ kind: "displaced", seq: -1, id, backend, op, table: table.id, module: table.module, removed: now === undefined });
      }
    }
  }
  return out;
}

/**
 * Whether the table holds `now` because a newer registration of another registry (a createRegistry(),
 * another copy's) overrode `owner` there: the newest of the order of entries, where there is one (an
 * older one's implementation written back is not that), else any registry's write of it (a copy
 * that keeps no order of entries with this one).
 */
function overriddenBy(target: object, owner: Registration, now: unknown): boolean {
  const stack = stacks().get(target)?.get(owner.opType);
  if (stack === undefined) return hub().wrote(target, owner.opType, now, owner.backend) !== false;
  const top = stack.entries[stack.entries.length - 1];
  if (top === undefined || top.seq <= owner.seq) return false;
  // What that registry wrote: its implementation, or what a table that wraps it made of it.
  return top.impl === now || (top.key.deref() as Table | undefined)?.landed?.get(owner.opType) === now;
}

/** Answers a window's question: did the registry write exactly this entry into that table? */
export function wrote(backends: Iterable<BackendState>, table: object, key: Function | string, impl: unknown): Writer | false {
  for (const state of backends) {
    const entry = state.table(table);
    if (entry === undefined) continue;
    // What it wrote: the implementation, or what a table that wraps implementations made of it.
    const is = (owner: Registration) =>
      (owner.impl === impl || (entry.landed?.get(owner.opType) === impl && impl !== undefined)) && owner.inTable(entry);
    if (typeof key !== "string") {
      const owner = state.owners.get(key as Class);
      if (owner !== undefined && is(owner)) return { key: entry, seq: owner.seq, impl: owner.impl };
      continue;
    }
    // A table keyed by op name (an adapter that writes under the class's name) holds the name.
    for (const owner of state.owners.values()) if (owner.op === key && is(owner)) return { key: entry, seq: owner.seq, impl: owner.impl };
  }
  return false;
}

/** A registry's entry in a table: its live registration's, of any copy. The registry's record of the table is held weakly (a dropped registry is collected). */
interface Entry {
  readonly key: WeakRef<object>;
  /** The registration's place in registration order, across registries and copies (Registration.seq). */
  readonly seq: number;
  readonly impl: unknown;
}

/** A table whose get() gives something else each time (it binds): what it shows cannot be compared. */
const UNSTABLE: unique symbol = Symbol("unstable");

/**
 * Per table and op type, made once an entry is written over another (a second registry's, or the
 * table's own): the live entries in registration order, what the table held before any of them
 * (`base`), and what it gave back after the last write (`shows`: anything else there now was written
 * around the registries, and is what the table gives back when the last entry leaves). The table
 * holds the newest entry; when it leaves, the next newest, or the base, is written back.
 */
interface Stack {
  base: unknown;
  shows: unknown;
  readonly entries: Entry[];
}
type Stacks = WeakMap<object, Map<unknown, Stack>>;
let shared: Stacks | undefined;
/** The thread's stacks, shared by every copy through the hub; looked up once per copy. */
const stacks = (): Stacks => {
  shared ??= hub().shared<Stacks>("entries@4", () => new WeakMap());
  return shared;
};

/** What wrote() gives another registry: enough to put the entry in its place in a stack. */
interface Writer {
  readonly key: object;
  readonly seq: number;
  readonly impl: unknown;
}

/** What the table is to hold: `value` (undefined: nothing), the entry of the registry whose record of the table is `to` (none: the table's own). */
export interface Show {
  readonly value: unknown;
  readonly to: object | undefined;
}

const entryOf = (w: Writer): Entry => ({ key: new WeakRef(w.key), seq: w.seq, impl: w.impl });
const isWriter = (w: unknown): w is Writer => typeof (w as Writer | null)?.key === "object" && typeof (w as Writer).seq === "number";
const newest = (stack: Stack): Show => {
  const top = stack.entries[stack.entries.length - 1];
  return top === undefined ? { value: stack.base, to: undefined } : { value: top.impl, to: top.key.deref() };
};

/** Nothing to write: the table holds what it should. */
export const KEEP: unique symbol = Symbol("keep");

/** The table holds `current`, not what the last write left: written around the registries, it is what the table gives back in the end. */
function noteAround(stack: Stack, current: unknown): void {
  if (current !== CANNOT_SAY && stack.shows !== UNSTABLE && current !== stack.shows) stack.base = current;
}

/**
 * A registry (`writer.key`, its record of the table) writes its registration's `impl` where the table
 * holds `current`; `again` when the registry has an entry there already (it supersedes its own).
 * Its entry goes in by registration order. What the table must hold now: this implementation when it
 * is the newest entry; the newest where this registry's own entry was the newest and is now behind
 * another (an heir coming back); or KEEP.
 */
export function enter(
  target: object,
  opType: unknown,
  backend: string,
  writer: Writer,
  current: unknown,
  again: boolean,
): Show | typeof KEEP {
  const byOp = stacks().get(target);
  let stack = byOp?.get(opType);
  if (stack === undefined) {
    // Alone over an empty slot, or over its own lone entry: leaving, it empties the slot again.
    if (current === undefined || again) return { value: writer.impl, to: writer.key };
    // Over a lone entry of another registry, or over the table's own.
    const owner = hub().wrote(target, opType as Class, current, backend);
    stack = isWriter(owner)
      ? { base: undefined, shows: current, entries: [entryOf(owner)] }
      : { base: current, shows: current, entries: [] };
    const map = byOp ?? new Map<unknown, Stack>();
    map.set(opType, stack);
    if (byOp === undefined) stacks().set(target, map);
  } else noteAround(stack, current);
  const entries = stack.entries;
  const old = entries.findIndex((e) => e.key.deref() === writer.key);
  const wasNewest = old >= 0 && old === entries.length - 1;
  if (old >= 0) entries.splice(old, 1);
  let at = entries.length;
  while (at > 0 && (entries[at - 1] as Entry).seq > writer.seq) at--;
  entries.splice(at, 0, entryOf(writer));
  return at === entries.length - 1 || wasNewest ? newest(stack) : KEEP;
}

/**
 * A registry's entry leaves the table (`key`: its record of the table), which holds `current`; `mine`
 * is what its entry shows (CANNOT_SAY in a table that wraps it). Where it was the newest, what the
 * table must hold now: the next newest entry, or what the table held before them all (undefined:
 * nothing); else KEEP. A lone entry that code around the registries wrote over is theirs: KEEP.
 */
export function leave(target: object, opType: unknown, key: object, current: unknown, mine: unknown): Show | typeof KEEP {
  const byOp = stacks().get(target);
  const stack = byOp?.get(opType);
  if (stack === undefined) {
    const around = current !== undefined && current !== CANNOT_SAY && mine !== CANNOT_SAY && current !== mine;
    return around ? KEEP : { value: undefined, to: undefined };
  }
  const entries = stack.entries;
  const index = entries.findIndex((e) => e.key.deref() === key);
  if (index < 0) return KEEP;
  noteAround(stack, current);
  entries.splice(index, 1);
  if (entries.length === 0) byOp?.delete(opType);
  return index < entries.length ? KEEP : newest(stack);
}

/** What a registration's entry shows in a table: its implementation, or, in a table that wraps it, nothing it can be told by. */
export const shows = (table: Table, r: Registration) => (table.landed?.has(r.opType) === true ? CANNOT_SAY : r.impl);

/** Whether the table holds another entry than the registration's lone one, written there around the registries. */
export function overwritten(table: Table, r: Registration): boolean {
  const target = table.ref.deref();
  const now = lookUp(table, r.opType);
  const mine = shows(table, r);
  if (target === undefined || now === undefined || now === CANNOT_SAY || mine === CANNOT_SAY || now === mine) return false;
  return stacks().get(target)?.has(r.opType) !== true;
}

/** After a write a stack asked for: what the table gives back now, read twice, so that a table that binds is known as one. */
export function shown(target: object, opType: Class, table: Table): void {
  const stack = stacks().get(target)?.get(opType);
  if (stack === undefined) return;
  const first = lookUp(table, opType);
  stack.shows = first !== CANNOT_SAY && first === lookUp(table, opType) ? first : UNSTABLE;
}
