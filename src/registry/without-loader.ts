/**
 * The rule that keeps "ok" from meaning "nothing was looked at" when no loader is installed: see
 * withoutLoader(). Pure, like the report it feeds (audit-report.ts).
 */
import type { Problem } from "./audit-events.js";
import type { NamedFold, ReportScope, ThreadFacts } from "./report-facts.js";

/**
 * Backends the program said it needs that nothing in the thread could serve: no loader is installed,
 * no host adapter's module announced a table, and no table of theirs exists. Nothing could check
 * them or make their registrations land, so the report cannot say "ok" (with a loader, such a
 * backend is "not loaded" instead). The program says it needs a backend by naming it to verify() or
 * assertComplete(), or by expecting op types on it; for a connected report (the exit audit, the
 * default registry) a backend any registry of the thread named to assertComplete() counts too.
 * Tables a framework provides itself (the native route) need no loader. Registrations alone say
 * nothing: a plugin registers for every backend it supports, whether or not the app uses it.
 */
export function withoutLoader(folds: readonly NamedFold[], facts: ThreadFacts, loaded: ReadonlySet<string>, scope: ReportScope): Problem[] {
  if (facts.loaders.length > 0 || facts.tables.some((t) => t.host !== undefined)) return [];
  const declared = new Map<string, string>();
  const declare = (backend: string, how: string) => {
    if (!declared.has(backend)) declared.set(backend, how);
  };
  for (const backend of scope.focus ?? []) declare(backend, "named to verify() or assertComplete()");
  if (scope.connected) for (const backend of facts.asserted ?? []) declare(backend, "named to assertComplete()");
  for (const { fold: f } of folds) {
    for (const [backend, ops] of f.expected) {
      const [source] = ops.values();
      declare(backend, `expected to hold ${[...ops.keys()].join(", ")} (by ${source})`);
    }
  }
  const problems: Problem[] = [];
  for (const [backend, how] of declared) {
    if (loaded.has(backend)) continue;
    problems.push({
      kind: "no-loader",
      backend,
      op: "-",
      id: undefined,
      message:
        `${backend} was ${how}, but no dispatch-hook loader is installed in this thread, no host adapter's module announced a table, and no ${backend} table exists: nothing could make its registrations land or check them. ` +
        `Start the program with node --import dispatch-hook/loader.mjs, run it through a host adapter (dispatch-hook/vitest, dispatch-hook/vite, dispatch-hook/esbuild or dispatch-hook/jest), or have the framework call announce(${JSON.stringify(backend)}, table) in its ${backend} dispatch module.`,
    });
  }
  return problems;
}
