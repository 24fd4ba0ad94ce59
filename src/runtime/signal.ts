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
