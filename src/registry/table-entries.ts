/**
 * What a registry's tables hold of what it wrote, asked when it matters: by a window (did the
 * registry write exactly this entry, or did a plugin write it directly?) and each time the audit is
 * read (does each table still hold what landed in it?).
 */
import { hub } from "../hub.js";
import type { AuditEvent } from "./audit-events.js";
import type { Class, Impl } from "./dispatcher.js";
import type { BackendState, Registration, Table } from "./registration.js";

/** What a table holds for an op type: undefined where it holds nothing, is gone, or its get() throws (a table raising for a key it lacks). */
export function held(table: Table, opType: Class): Impl | undefined {
  const target = table.ref.deref();
  try {
    return target === undefined ? undefined : table.adapter.get(target, opType);
  } catch {
    return undefined;
  }
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
        const transforms = table.landed?.has(owner.opType) === true;
        const landed = transforms ? table.landed?.get(owner.opType) : owner.impl;
        if (table.ref.deref() === undefined || landed === undefined) continue;
        const now = held(table, owner.opType);
        const { id, backend, op } = owner;
        if (transforms ? now !== undefined : now === landed) continue;
        // Another registry's audited override (another copy's, a createRegistry()) is not code that went around them.
        if (now !== undefined && hub().wrote(table.ref.deref() as object, owner.opType, now, backend)) continue;
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

/** Per table and op type, across registries and copies: what each implementation written over another registry's entry replaced. */
type Chains = WeakMap<object, Map<unknown, Map<unknown, unknown>>>;
const chains = (): Chains => hub().shared<Chains>("replaced@1", () => new WeakMap());

/** A registration wrote `impl` over `original`, an entry it did not put there (another registry's, or the framework's). */
export function noteReplaced(target: object, opType: unknown, impl: unknown, original: unknown): void {
  const byOp = chains().get(target) ?? new Map<unknown, Map<unknown, unknown>>();
  chains().set(target, byOp);
  const chain = byOp.get(opType) ?? new Map<unknown, unknown>();
  byOp.set(opType, chain);
  chain.set(impl, original);
}

/**
 * A registration leaves a table: what it replaced there (`own`, its registry's record, where no
 * chain knows better), and it is taken out of the chain, so that one written over it later puts
 * back what it had replaced instead of an implementation that is gone (`landed`: what the table
 * made of it).
 */
export function leave(target: object, opType: unknown, impl: unknown, landed: unknown, own: unknown): unknown {
  const chain = chains().get(target)?.get(opType);
  if (chain === undefined) return own;
  const back = chain.has(impl) ? chain.get(impl) : own;
  chain.delete(impl);
  for (const [other, original] of chain) if (original === impl || (original === landed && landed !== undefined)) chain.set(other, back);
  return back;
}
