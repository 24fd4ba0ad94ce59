/**
 * What a registry adds to a Dispatcher's miss error: its registrations for the missed type and why each
 * has not landed in that table, or that the class that reached it is a second copy of the registered
 * one. Those two kinds of miss are also recorded in the audit, once per registration and table.
 */
import type { DispatchMiss } from "../channel.js";
import { hub } from "../hub.js";
import { noticeTable } from "../table-reads.js";
import type { AuditEvent, Unsequenced } from "./audit-events.js";
import { getOrCreate } from "./audit-fold.js";
import { tablesText } from "./audit-format.js";
import { hostHint } from "./host-hint.js";
import type { BackendState, Registration } from "./registration.js";
import type { TableWriter } from "./table-writer.js";
import { missingExport } from "./thread-audit.js";

interface MissContext {
  readonly registrations: readonly Registration[];
  /** The registry's backends, and the tables it withdrew with their handles. */
  readonly writer: Pick<TableWriter, "backend" | "withdrawn">;
  record(event: Unsequenced<AuditEvent>): void;
  /** Of a namespace of its own (a backend set's): a framework's table of the same backend name is not its concern. */
  readonly own?: boolean;
}

function siteOf(registration: Registration): string {
  const site = registration.requested.site;
  return site === "unknown" ? "" : `, from ${site}`;
}

/** What to add where no loader and no adapter is installed: the host's own line, where the host can be told. */
function noLoader(): string {
  return (
    hostHint() ??
    "the dispatch-hook loader is not installed in this thread. Start node with --import dispatch-hook/loader.mjs, or have the framework call announce()."
  );
}

function whyPending(state: BackendState, table: object): string {
  if (state.tables.length > 0) {
    return state.table(table) !== undefined
      ? "this table was provided, but applying to it did not succeed."
      : `the ${state.name} table this registry was given (${tablesText(state.tables)}) is another module instance than the one that missed.`;
  }
  const installations = hub().loaders();
  const finding = installations.flatMap((i) => i.findings ?? []).find((f) => f.backend === state.name);
  if (finding !== undefined) return finding.message;
  // Its dispatch module signalled, without the export its declaration names (a typo).
  for (const notice of hub().allTables()) {
    if (notice.via !== "hook" || notice.backend !== state.name || noticeTable(notice) !== undefined) continue;
    const missing = missingExport(notice.exports, notice.exportName);
    if (missing !== undefined) return `${notice.module} was loaded as the ${state.name} dispatch module, but ${missing}`;
  }
  if (installations.length === 0) return `no ${state.name} table ever reached dispatch-hook, and ${noLoader()}`;
  return `no ${state.name} table ever reached dispatch-hook: the loader is installed, but no module declared for ${state.name} signalled that it finished loading. Check the backend's declaration (npx dispatch-hook doctor).`;
}

export class MissExplainer {
  /** Registration ids already recorded per table, so a hot loop of misses records each once. */
  readonly #recorded = new WeakMap<object, Set<string>>();

  #once(table: object, key: string): boolean {
    const keys = getOrCreate(this.#recorded, table, () => new Set<string>());
    if (keys.has(key)) return false;
    keys.add(key);
    return true;
  }

  explain(message: DispatchMiss, context: MissContext): void {
    const before = message.hints.length;
    const chain = new Set(message.chain);
    const names = new Set(message.chain.map((type) => type.name));
    const ours = (backend: string) => context.writer.backend(backend).table(message.table) !== undefined;
    for (const registration of context.registrations) {
      const { backend, op, id } = registration;
      if ((context.own === true || (message.backend !== undefined && message.backend !== backend)) && !ours(backend)) continue;
      const where = `${op} on ${backend} (registration #${id}${siteOf(registration)})`;
      if (!chain.has(registration.opType)) {
        if (!names.has(op) || (registration.state !== "applied" && registration.state !== "pending")) continue;
        const why =
          `the ${op} that reached this table is a second copy of that class ` +
          "(two copies of the module that defines it are loaded, for example one inlined by a bundler or test runner and one loaded by Node). " +
          "Make the plugin and the framework import the same module instance.";
        message.hints.push(`${where} was made for another class named ${op}: ${why}`);
        if (registration.state === "applied" && this.#once(message.table, `identity ${id}`)) {
          const text = `${where} was made for another class named ${op}, a class identity that nothing dispatches on: ${why}`;
          context.record({ kind: "identity", id, backend, op, message: text });
        }
        continue;
      }
      const state = context.writer.backend(backend);
      if (registration.state === "pending") message.hints.push(`${where} is pending: ${whyPending(state, message.table)}`);
      else if (registration.state === "failed") message.hints.push(`${where} failed to apply; see the audit log (registry.verify()).`);
      else if (registration.state === "refused") message.hints.push(`${where} was refused; see the audit log (registry.verify()).`);
      else if (registration.state === "applied" && !registration.inTable(state.table(message.table))) {
        if (context.writer.withdrawn.has(message.table)) {
          message.hints.push(
            `${where} was applied to ${tablesText(state.tables)}; this table was withdrawn from the registry with its handle.`,
          );
          continue;
        }
        const text = `${where} was applied to ${tablesText(state.tables)}, but not to this table, which the registry was never given.`;
        message.hints.push(text);
        if (this.#once(message.table, `unseen ${id}`)) context.record({ kind: "unseen-table", backend, op, message: text });
      }
    }
    if (message.hints.length === before || message.backend === undefined) return;
    // Name everything else still waiting on this backend: one miss is rarely alone.
    const waiting = context.registrations
      .filter((r) => r.state === "pending" && r.backend === message.backend)
      .map((r) => `${r.opType.name || "(anonymous)"} (#${r.id})`);
    if (waiting.length > 1) message.hints.push(`${waiting.length} registrations are pending on ${message.backend}: ${waiting.join(", ")}.`);
  }
}
