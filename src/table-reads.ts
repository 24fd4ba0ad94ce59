/** Reading what tables and notices hold, the same way in every copy: a table's entries, the op a key names, the table a notice names. */
import { dispatcherBrand, type TableNotice } from "./channel.js";

/** A table's entries, for tables that can list them (a Dispatcher of any copy, by its brand, and a Map). */
export function listEntries(table: unknown): ReadonlyMap<unknown, unknown> | undefined {
  if (typeof table !== "object" || table === null) return undefined;
  if (table instanceof Map) return table;
  if ((table as { [dispatcherBrand]?: unknown })[dispatcherBrand] !== true) return undefined;
  const entries = (table as { entries?: unknown }).entries;
  const listable = typeof entries === "object" && entries !== null && typeof (entries as Map<unknown, unknown>).get === "function";
  return listable ? (entries as ReadonlyMap<unknown, unknown>) : undefined;
}

/**
 * The op a table key stands for, in messages and expectations: a class by its name, a string key (a
 * table keyed by op name) as itself. Any other key names no op: not counted, nor reported as written.
 */
export function keyName(key: Function | string): string;
export function keyName(key: unknown): string | undefined;
export function keyName(key: unknown): string | undefined {
  if (typeof key === "function") return key.name || "(anonymous class)";
  return typeof key === "string" ? key : undefined;
}

/**
 * A module's export `name`. For "default", a CommonJS module whose exports are themselves a table
 * (`module.exports = new Dispatcher(…)`: a Map, or an object with register()), with no `default` of
 * their own, is that table, as `import table from` gives it; an ES namespace or compiled ES module never is.
 */
export function exportOf(exports: unknown, name: string): unknown {
  if ((typeof exports !== "object" && typeof exports !== "function") || exports === null) return undefined;
  const value = (exports as Record<string, unknown>)[name];
  if (value !== undefined || name !== "default" || Object.prototype.toString.call(exports) === "[object Module]") return value;
  const object = exports as { __esModule?: unknown; register?: unknown };
  return object.__esModule === undefined &&
    (Object.prototype.toString.call(exports) === "[object Map]" || typeof object.register === "function")
    ? exports
    : undefined;
}

/** The table a notice names (a hook notice holds the module's namespace, or its exports). */
export function noticeTable(notice: TableNotice): unknown {
  return notice.via === "native" ? notice.table : exportOf(notice.exports, notice.exportName);
}
