/** The signal that a watched dispatch module has finished evaluating. Generated code calls it. */
import { channels, type ModuleEvaluatedMessage, type ModuleInfo, publish } from "../channel.js";
import { announce } from "./table-notice.js";

/**
 * Announces the module's table to the thread and tells every listening registry now. `namespace`
 * is the module namespace of an ES module, or `module.exports` of a CommonJS one.
 */
export function signalEvaluated(info: ModuleInfo, namespace: unknown): void {
  announce({ via: "hook", backend: info.backend, module: info.url, namespace, exportName: info.exportName, host: info.host });
  if (channels.moduleEvaluated.hasSubscribers) {
    publish(channels.moduleEvaluated, { version: 1, ...info, namespace } satisfies ModuleEvaluatedMessage);
  }
}
