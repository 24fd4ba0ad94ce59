/**
 * Reading a dispatch table's entries, for tables that can list them: a Dispatcher of any copy of
 * the package (recognised by its brand) and a Map. Shared by the registry (expectations are checked
 * against what a table holds) and the runtime (writes made outside the registry are found by
 * comparing a table before and after a plugin's module ran).
 */
import { dispatcherBrand, type TableNotice } from "./channel.js";

/** The table's entries, or undefined when it cannot list them. */
export function listEntries(table: unknown): ReadonlyMap<unknown, unknown> | undefined {
  if (typeof table !== "object" || table === null) return undefined;
  if (table instanceof Map) return table;
  if ((table as { [dispatcherBrand]?: unknown })[dispatcherBrand] === true) {
    const entries = (table as { entries?: unknown }).entries;
    if (typeof entries === "object" && entries !== null && typeof (entries as Map<unknown, unknown>).get === "function") {
      return entries as ReadonlyMap<unknown, unknown>;
    }
  }
  return undefined;
}

/** The name an op type goes by in messages and expectations. */
export function typeName(type: unknown): string {
  return typeof type === "function" && type.name ? type.name : "(anonymous class)";
}

/**
 * The op a table key stands for: a class by its name, and a string key (a table keyed by op name,
 * such as a Map<string, impl>) as itself. Any other key names no op: it is neither counted for an
 * expectation nor reported as written.
 */
export function keyName(key: Function | string): string;
export function keyName(key: unknown): string | undefined;
export function keyName(key: unknown): string | undefined {
  if (typeof key === "function") return typeName(key);
  return typeof key === "string" ? key : undefined;
}

/** The table a notice names (a hook notice holds the module's namespace, or its exports). */
export function noticeTable(notice: TableNotice): unknown {
  if (notice.via === "native") return notice.table;
  const namespace = notice.exports;
  return typeof namespace === "object" && namespace !== null ? (namespace as Record<string, unknown>)[notice.exportName] : undefined;
}
