/**
 * The audit of a whole thread: every registry of every installed copy of dispatch-hook, folded
 * with one fold, and the thread's facts once. The loader's exit audit and the command line speak
 * through this; a registry's own verify() answers only for that registry (registryReport).
 */
import { frameworkNamespace, type InstallationStatus } from "../channel.js";
import { hub } from "../hub.js";
import type { AuditEvent, AuditReport, VerifyOptions } from "./audit-events.js";
import { fold } from "./audit-fold.js";
import { frozen } from "./audit-log.js";
import { buildReport } from "./audit-report.js";
import { checkVerifyOptions } from "./options.js";
import type { NamedFold } from "./report-facts.js";
import { gatherFacts } from "./thread-facts.js";

export function threadAudit(options: VerifyOptions = {}): AuditReport {
  checkVerifyOptions(options, "threadAudit()");
  const registries = hub()
    .members()
    .map((m) => ({ name: m.name, copy: m.copy, events: inNamespace(m.events() as readonly AuditEvent[], m.namespace) }))
    .filter((r) => r.events.length > 0);
  const copies = new Set(registries.map((r) => r.copy));
  const folds: NamedFold[] = registries.map((r) => ({
    fold: fold(r.events),
    name: copies.size > 1 ? `${r.name} (${r.copy})` : r.name,
  }));
  return frozen(buildReport(folds, gatherFacts(), { connected: true, focus: options.backends }));
}

/**
 * A registry of another namespace than the frameworks' (a backend set's) has backends of its own:
 * named with their namespace, so that they never count for a framework's backend of the same name.
 */
function inNamespace(events: readonly AuditEvent[], namespace: string): readonly AuditEvent[] {
  if (namespace === frameworkNamespace) return events;
  return events.map((event) => {
    const data = (event as { toJSON?: () => AuditEvent }).toJSON?.() ?? event;
    return "backend" in data ? { ...data, backend: `${data.backend} [${namespace}]` } : data;
  });
}

/**
 * One registry's report: its own events, the thread's facts and the tables it was given directly.
 * `connected` says whether the loaders' facts (expectations, plugins' modules) count for it: true
 * for the registry a loader feeds, and, with no loader, for the default registry host adapters feed.
 */
export function registryReport(
  events: readonly AuditEvent[],
  options: VerifyOptions,
  own: ReadonlyArray<{ readonly backend: string; readonly module: string | undefined; readonly table: object }>,
  connected: (loaders: readonly InstallationStatus[]) => boolean,
): AuditReport {
  checkVerifyOptions(options, "verify() or format()");
  const facts = gatherFacts(own);
  return buildReport([{ fold: fold(events) }], facts, { connected: connected(facts.loaders), focus: options.backends });
}
