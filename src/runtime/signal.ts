/** How a dispatch module instance announces its table: from generated code, at the end of its evaluation. */
import { frameworkNamespace, type ModuleInfo } from "../channel.js";
import { hub } from "../hub.js";

/** Announces a dispatch module's table to the hub. `exports`: an ES module's namespace, or a CommonJS `module.exports`. */
export function signalEvaluated(info: Pick<ModuleInfo, "url" | "backend" | "exportName" | "host">, exports: unknown): void {
  hub().announce({
    via: "hook",
    namespace: frameworkNamespace,
    backend: info.backend,
    module: info.url,
    exports,
    exportName: info.exportName,
    host: info.host,
  });
}

const holders = new WeakMap<object, Record<string, unknown>>();

/**
 * Announces a table the ES epilogue read from the module's own binding (no import of its own
 * namespace, which costs an instance more than the rest of the epilogue). Registries read tables as
 * `exports[exportName]`, so the table is announced in a holder of that shape, kept while the table
 * lives: the hub holds it weakly, as it holds a namespace.
 */
export function signalTable(info: Pick<ModuleInfo, "url" | "backend" | "exportName">, table: unknown): void {
  const kept = (typeof table === "object" && table !== null) || typeof table === "function";
  let holder = kept ? holders.get(table) : undefined;
  if (holder === undefined) {
    holder = Object.create(null) as Record<string, unknown>;
    if (kept) holders.set(table, holder);
  }
  holder[info.exportName] = table;
  signalEvaluated(info, holder);
}
