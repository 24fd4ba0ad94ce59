/** The framework-native route: a dispatch module announces its own table, and no loader is needed. */
import { channels, publish, type TableProvidedMessage } from "./channel.js";
import { DispatchHookError, describe } from "./registry/errors.js";
import { checkBackend } from "./registry/names.js";
import { checkOptions } from "./registry/options.js";
import { announce } from "./runtime/table-notice.js";

/**
 * Call it at the end of a backend's dispatch module. It announces the table to every registry in
 * the thread, of every copy of dispatch-hook, including registries that start waiting later.
 */
export function provide(backend: string, table: object, meta: { readonly module?: string } = {}): void {
  checkBackend(backend, "provide()");
  if ((typeof table !== "object" && typeof table !== "function") || table === null) {
    throw new DispatchHookError(
      "ERR_DISPATCH_TABLE_SHAPE",
      `provide(${JSON.stringify(backend)}, …): the table must be an object, got ${describe(table)}.`,
    );
  }
  checkOptions(meta, { module: "string" }, `provide(${JSON.stringify(backend)}, …)`);
  announce({ via: "native", backend, module: meta.module, table });
  if (channels.tableProvided.hasSubscribers) {
    publish(channels.tableProvided, { version: 1, backend, table, module: meta.module } satisfies TableProvidedMessage);
  }
}
