/** The signal that a watched dispatch module has finished evaluating. Generated code calls it. */
import { frameworkNamespace, type ModuleInfo } from "../channel.js";
import { hub } from "../hub.js";

/**
 * Announces the module's table to the thread's hub, which tells every registry waiting for the
 * backend now. `exports` is the module namespace of an ES module, or `module.exports` of a CommonJS one.
 */
export function signalEvaluated(info: ModuleInfo, exports: unknown): void {
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
