/** The framework-native route: a dispatch module announces its own table, and no loader is needed. */
import { frameworkNamespace } from "./channel.js";
import { hub } from "./hub.js";
import { DispatchHookError, describe } from "./registry/errors.js";
import { checkBackend, checkOptions } from "./registry/options.js";

/**
 * Call it at the end of a backend's dispatch module. It announces the table to every registry in
 * the thread, of every copy of dispatch-hook, including registries that start waiting later.
 * `namespace` is for tables that are not a framework's (the default): only registries of the same
 * namespace see them.
 */
export function announce(backend: string, table: object, meta: { readonly module?: string; readonly namespace?: string } = {}): void {
  checkBackend(backend, "announce()");
  if ((typeof table !== "object" && typeof table !== "function") || table === null) {
    throw new DispatchHookError(
      "ERR_DISPATCH_TABLE_SHAPE",
      `announce(${JSON.stringify(backend)}, …): the table must be an object, got ${describe(table)}.`,
    );
  }
  checkOptions(meta, { module: "string", namespace: "string" }, `announce(${JSON.stringify(backend)}, …)`);
  hub().announce({ via: "native", namespace: meta.namespace ?? frameworkNamespace, backend, module: meta.module, table });
}
