import { type Class, type Impl, isDispatcher } from "./dispatcher.js";
import { DispatchHookError, describe } from "./errors.js";

/**
 * How the registry reads and writes one kind of dispatch table. A framework whose tables have
 * another shape passes its own adapter with `registry.declare(backend, { adapter })`.
 */
export interface TableAdapter {
  /** Shown in the audit log ("Dispatcher", "Map", or the adapter's own name; "custom" if unset). */
  readonly kind?: string;
  /** The current entry for exactly `type`; `undefined` when there is none or the table cannot say. */
  get(table: object, type: Class): Impl | undefined;
  set(table: object, type: Class, impl: Impl): void;
  /** Removes the entry for `type`. Omit it for tables that cannot remove entries. */
  delete?(table: object, type: Class): void;
}

interface RegisterShaped {
  register(type: Class, impl: Impl): unknown;
  get?(type: Class): unknown;
  unregister?(type: Class): unknown;
  delete?(type: Class): unknown;
}

const mapAdapter: TableAdapter = {
  kind: "Map",
  get: (table, type) => (table as Map<Class, Impl>).get(type),
  set: (table, type, impl) => {
    (table as Map<Class, Impl>).set(type, impl);
  },
  delete: (table, type) => {
    (table as Map<Class, Impl>).delete(type);
  },
};

/** A Dispatcher (of any copy) is register()-shaped too, with get and unregister. */
function registerShapedAdapter(table: RegisterShaped, kind: string): TableAdapter {
  const remove = typeof table.unregister === "function" ? "unregister" : typeof table.delete === "function" ? "delete" : undefined;
  const canGet = typeof table.get === "function";
  return {
    kind,
    get: (t, type) => {
      if (!canGet) return undefined;
      const impl = (t as RegisterShaped).get?.(type);
      return typeof impl === "function" ? (impl as Impl) : undefined;
    },
    set: (t, type, impl) => {
      (t as RegisterShaped).register(type, impl);
    },
    ...(remove === undefined
      ? {}
      : {
          delete: (t: object, type: Class) => {
            (t as Required<RegisterShaped>)[remove](type);
          },
        }),
  };
}

const adapterKeys = new Set(["kind", "get", "set", "delete"]);

/** Checks a user-supplied adapter where it enters. */
export function checkAdapter(adapter: unknown, where: string): TableAdapter {
  if (typeof adapter !== "object" || adapter === null) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `${where}: "adapter" must be an object with get, set and delete, got ${describe(adapter)}.`,
    );
  }
  for (const key of Object.keys(adapter)) {
    if (!adapterKeys.has(key)) {
      throw new DispatchHookError(
        "ERR_DISPATCH_INVALID_OPTION",
        `${where}: unknown adapter key ${JSON.stringify(key)}; an adapter has kind, get, set and delete.`,
      );
    }
  }
  const { get, set, delete: remove, kind } = adapter as Partial<TableAdapter>;
  if (typeof get !== "function" || typeof set !== "function" || (remove !== undefined && typeof remove !== "function")) {
    throw new DispatchHookError(
      "ERR_DISPATCH_INVALID_OPTION",
      `${where}: an adapter needs get(table, type) and set(table, type, impl) functions, and delete may only be a function.`,
    );
  }
  if (kind !== undefined && typeof kind !== "string") {
    throw new DispatchHookError("ERR_DISPATCH_INVALID_OPTION", `${where}: adapter "kind" must be a string.`);
  }
  return { ...(adapter as TableAdapter), kind: kind ?? "custom" };
}

/** Picks the adapter for a table, or explains why none fits. */
export function adapterFor(table: unknown, backend: string, custom?: TableAdapter): TableAdapter {
  if (custom !== undefined) {
    if ((typeof table !== "object" && typeof table !== "function") || table === null) {
      throw new DispatchHookError(
        "ERR_DISPATCH_TABLE_SHAPE",
        `The table provided for backend ${JSON.stringify(backend)} must be an object, got ${describe(table)}.`,
      );
    }
    return custom;
  }
  if (isDispatcher(table)) return registerShapedAdapter(table as unknown as RegisterShaped, "Dispatcher");
  if (table instanceof Map) return mapAdapter;
  if (
    (typeof table === "object" || typeof table === "function") &&
    table !== null &&
    typeof (table as Partial<RegisterShaped>).register === "function"
  ) {
    return registerShapedAdapter(table as RegisterShaped, "register()");
  }
  throw new DispatchHookError(
    "ERR_DISPATCH_TABLE_SHAPE",
    `The table provided for backend ${JSON.stringify(backend)} is not a Dispatcher, a Map, or an object with register(type, impl): got ${describe(table)}. ` +
      `Pass an adapter for it: registry.declare(${JSON.stringify(backend)}, { adapter: { get, set, delete } }), on every registry that registers for it ` +
      '(each installed copy of dispatch-hook, and its ES and CommonJS entries, has a default registry of its own: a CommonJS plugin\'s is require("dispatch-hook").registry).',
  );
}
