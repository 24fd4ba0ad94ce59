/**
 * What a registry's tables hold of what it wrote, asked when it matters: by a window (did the
 * registry write exactly this entry, or did a plugin write it directly?) and each time the audit is
 * read (does each table still hold what landed in it?).
 */
import { hub } from "../hub.js";
import type { AuditEvent } from "./audit-events.js";
import type { Class, Impl } from "./dispatcher.js";
import type { BackendState, Registration, Table } from "./registration.js";

const CANNOT_SAY: unique symbol = Symbol("cannot say");

/** What a table holds for an op type: undefined where it holds nothing or is gone; CANNOT_SAY where its get() throws. */
function lookUp(table: Table, opType: Class): Impl | undefined | typeof CANNOT_SAY {
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
 * replaced or removed by code that went around the registry (a framework filling its defaults late,
 * an unregister()). A table that gave back something else than the implementation right after the
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
        // Another registry's audited override (another copy's, a createRegistry()) is not code that went around them.
        if (now !== undefined && hub().wrote(target, owner.opType, now, backend)) continue;
        out.push({ kind: "displaced", seq: -1, id, backend, op, table: table.id, module: table.module, removed: now === undefined });
      }
    }
  }
  return out;
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

/**
 * Per table and op type, made once an entry is written over another (a second registry's, or the
 * table's own): the live entries in registration order, and what the table held before any of them
 * (`base`). The table holds the newest; when it leaves, the next newest, or the base, is written back.
 */
interface Stack {
  base: unknown;
  readonly entries: Entry[];
}
type Stacks = WeakMap<object, Map<unknown, Stack>>;
const stacks = (): Stacks => hub().shared<Stacks>("entries@4", () => new WeakMap());

/** What wrote() gives another registry: enough to put the entry in its place in a stack. */
interface Writer {
  readonly key: object;
  readonly seq: number;
  readonly impl: unknown;
}

const entryOf = (w: Writer): Entry => ({ key: new WeakRef(w.key), seq: w.seq, impl: w.impl });
const isWriter = (w: unknown): w is Writer => typeof (w as Writer | null)?.key === "object" && typeof (w as Writer).seq === "number";

/** Nothing to write: the table holds what it should. */
export const KEEP: unique symbol = Symbol("keep");

/**
 * A registry (`writer.key`, its record of the table) writes its registration's `impl` where the table
 * holds `current`; `again` when the registry has an entry there already (it supersedes its own).
 * Its entry goes in by registration order. What the table must hold now: this implementation when it
 * is the newest entry; a newer one's of another registry where this registry's own entry was the
 * newest and is now behind it (an heir coming back); or KEEP.
 */
export function enter(target: object, opType: unknown, backend: string, writer: Writer, current: unknown, again: boolean): unknown {
  const byOp = stacks().get(target);
  let stack = byOp?.get(opType);
  if (stack === undefined) {
    // Alone over an empty slot, or over its own lone entry: leaving, it empties the slot again.
    if (current === undefined || again) return writer.impl;
    // Over a lone entry of another registry, or over the table's own.
    const owner = hub().wrote(target, opType as Class, current, backend);
    stack = isWriter(owner) ? { base: undefined, entries: [entryOf(owner)] } : { base: current, entries: [] };
    const map = byOp ?? new Map<unknown, Stack>();
    map.set(opType, stack);
    if (byOp === undefined) stacks().set(target, map);
  } else if (
    !stack.entries.some((e) => e.impl === current) &&
    !(current !== undefined && hub().wrote(target, opType as Class, current, backend))
  ) {
    // The table holds what no live entry wrote (the framework's own, written since): a leaving entry gives that back.
    stack.base = current;
  }
  const entries = stack.entries;
  const old = entries.findIndex((e) => e.key.deref() === writer.key);
  const wasNewest = old >= 0 && old === entries.length - 1;
  if (old >= 0) entries.splice(old, 1);
  let at = entries.length;
  while (at > 0 && (entries[at - 1] as Entry).seq > writer.seq) at--;
  entries.splice(at, 0, entryOf(writer));
  if (at === entries.length - 1) return writer.impl;
  return wasNewest ? (entries[entries.length - 1] as Entry).impl : KEEP;
}

/**
 * A registry's entry leaves the table (`key`: its record of the table). Where it was the newest, what
 * to write there now: the next newest entry's implementation, or what the table held before them all
 * (undefined: the slot is emptied); else KEEP.
 */
export function leave(target: object, opType: unknown, key: object): unknown {
  const byOp = stacks().get(target);
  const stack = byOp?.get(opType);
  if (stack === undefined) return undefined;
  const entries = stack.entries;
  const index = entries.findIndex((e) => e.key.deref() === key);
  if (index < 0) return KEEP;
  entries.splice(index, 1);
  if (entries.length === 0) byOp?.delete(opType);
  if (index < entries.length) return KEEP;
  return entries.length === 0 ? stack.base : (entries[entries.length - 1] as Entry).impl;
}
