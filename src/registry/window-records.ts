/**
 * What the plugins' registration windows add to a report: each plugin's module and how it loaded,
 * the entries it wrote into a table directly (outside the registry), and the problems among them.
 */
import type { WindowFact } from "../channel.js";
import type { OutsideRecord, PluginModuleRecord, Problem } from "./audit-events.js";

export function windowRecords(facts: { readonly windows: readonly WindowFact[] }): {
  plugins: PluginModuleRecord[];
  outside: OutsideRecord[];
  problems: Problem[];
} {
  const plugins: PluginModuleRecord[] = [];
  const outside: OutsideRecord[] = [];
  const problems: Problem[] = [];
  const seen = new Set<string>();
  for (const { info, state, outside: writes, error } of facts.windows) {
    if (seen.has(info.id)) continue;
    seen.add(info.id);
    const where = `${info.plugin}'s registration module for ${info.backend} (${info.module})`;
    plugins.push({
      plugin: info.plugin,
      backend: info.backend,
      module: info.module,
      for: info.url,
      state: state === "done" ? "loaded" : state === "open" || state === "awaiting" ? "loading" : state,
      error,
    });
    if (state === "missing") {
      problems.push({
        kind: "failed",
        backend: info.backend,
        op: "-",
        id: undefined,
        message: `${where} could not be loaded: ${error?.message ?? "unknown error"}. The backend loaded without it.`,
      });
    } else if (state === "failed" || state === "awaiting") {
      problems.push({
        kind: "failed",
        backend: info.backend,
        op: "-",
        id: undefined,
        message:
          error === undefined
            ? `${where} did not finish evaluating: it threw (the error reached whoever imported ${info.url}), or it is still waiting at a top-level await.`
            : `${where} threw: ${error.message}`,
      });
    }
    for (const write of writes) {
      outside.push({
        backend: info.backend,
        op: write.op,
        plugin: info.plugin,
        module: info.module,
        table: info.url,
        replaced: write.replaced,
      });
      if (write.replaced) {
        problems.push({
          kind: "conflict",
          backend: info.backend,
          op: write.op,
          id: undefined,
          message: `${where} replaced the ${info.backend} table's entry for ${write.op} directly, outside the registry. Register through dispatch-hook (register(…, { override: true })) so the replacement is audited and can be undone.`,
        });
      }
    }
  }
  return { plugins, outside, problems };
}
