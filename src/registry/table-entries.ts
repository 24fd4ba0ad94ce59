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
export function wrote(backends: Iterable<BackendState>, table: object, key: Function | string, impl: unknown): boolean {
  for (const state of backends) {
    const entry = state.table(table);
    if (entry === undefined) continue;
    // What it wrote: the implementation, or what a table that wraps implementations made of it.
    const is = (owner: Registration) =>
      (owner.impl === impl || (entry.landed?.get(owner.opType) === impl && impl !== undefined)) && owner.inTable(entry);
    if (typeof key !== "string") {
      const owner = state.owners.get(key as Class);
      if (owner !== undefined && is(owner)) return true;
      continue;
    }
    // A table keyed by op name (an adapter that writes under the class's name) holds the name.
    for (const owner of state.owners.values()) if (owner.op === key && is(owner)) return true;
  }
  return false;
}

/**
 * Per table and op type, across registries and copies: what each implementation written over an
 * entry it did not put there replaced (`live`), and what each that left would give back (`gone`),
 * so that an entry found later that names one that left leads on to what is still live.
 */
interface Chain {
  /** By registration (two may write the same function): what it wrote, and what that replaced. */
  readonly live: Map<object, { readonly impl: unknown; original: unknown }>;
  /** By what a registration that left wrote: what it gave back. */
  readonly gone: Map<unknown, unknown>;
}
type Chains = WeakMap<object, Map<unknown, Chain>>;
const chains = (): Chains => hub().shared<Chains>("replaced@3", () => new WeakMap());

/** `writer` (a registration) wrote `impl` over `original`, an entry its registry did not put there (another registry's, or the framework's). */
export function noteReplaced(target: object, opType: unknown, writer: object, impl: unknown, original: unknown): void {
  const byOp = chains().get(target) ?? new Map<unknown, Chain>();
  chains().set(target, byOp);
  const chain = byOp.get(opType) ?? { live: new Map(), gone: new Map() };
  byOp.set(opType, chain);
  chain.live.set(writer, { impl, original });
  chain.gone.delete(impl);
}

/**
 * A registration leaves a table: what it replaced there (`own`, its registry's record, where no
 * chain knows better), and it is taken out of the chain, so that one written over it later puts
 * back what it had replaced instead of an implementation that is gone (`landed`: what the table
 * made of it).
 */
export function leave(target: object, opType: unknown, writer: object, impl: unknown, landed: unknown, own: unknown): unknown {
  const chain = chains().get(target)?.get(opType);
  if (chain === undefined) return own;
  let back = chain.live.get(writer)?.original ?? own;
  // What it would give back left too (a registration superseded in its own registry names the one before it).
  for (let hops = 0; chain.gone.has(back) && hops <= chain.gone.size; hops++) back = chain.gone.get(back);
  chain.live.delete(writer);
  if (![...chain.live.values()].some((e) => e.impl === impl)) chain.gone.set(impl, back);
  for (const entry of chain.live.values())
    if (entry.original === impl || (entry.original === landed && landed !== undefined)) entry.original = back;
  return back;
}
