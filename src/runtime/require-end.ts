/**
 * Registration modules of a CommonJS dispatch module reached through require() (registerHooks
 * only). Requiring them from the module's own epilogue would run them while the module is still
 * loading, and an ES registration module that imports it back fails with ERR_REQUIRE_CYCLE_MODULE
 * (Node 22, 24, 26). So the epilogue only arms this: they run when the require() of the module ends
 * (`tracing:module.require:end`, published synchronously before require() returns to its caller),
 * each in its window, with a throw recorded instead of rethrown.
 */
import { diagnosticsChannel, url } from "../builtins.js";
import { channels, type ModuleEvaluatedMessage, type ModuleInfo, type WindowInfo } from "../channel.js";
import { runRegistration } from "./window.js";

export interface PendingRegistration {
  readonly plugin: string;
  /** File URL of the registration module. */
  readonly url: string;
}

export function windowInfo(module: ModuleInfo, registration: PendingRegistration): WindowInfo {
  return {
    id: `${module.url} ${registration.url}`,
    url: module.url,
    backend: module.backend,
    plugin: registration.plugin,
    module: registration.url,
  };
}

/**
 * Arms the registrations of a CommonJS dispatch module whose body just finished. `load` is the
 * module's own require. If the module was reached through import() instead, its facade runs the
 * registration modules and publishes the evaluated signal, which disarms this.
 */
export function afterRequire(module: ModuleInfo, exports: unknown, load: (id: string) => unknown, registrations: readonly PendingRegistration[]): void {
  if (registrations.length === 0) return;
  const tracing = diagnosticsChannel.tracingChannel?.("module.require");
  const run = () => {
    for (const registration of registrations) {
      runRegistration(windowInfo(module, registration), module, exports, () => load(url.fileURLToPath(registration.url)));
    }
  };
  if (tracing === undefined) {
    run();
    return;
  }
  const handlers = {
    end(message: unknown) {
      if ((message as { result?: unknown }).result !== exports) return;
      disarm();
      run();
    },
  };
  const onEvaluated = (message: unknown) => {
    const m = message as ModuleEvaluatedMessage;
    if (m.url === module.url && m.namespace === exports) disarm();
  };
  const disarm = () => {
    tracing.end.unsubscribe(handlers.end);
    channels.moduleEvaluated.unsubscribe(onEvaluated);
  };
  tracing.end.subscribe(handlers.end);
  channels.moduleEvaluated.subscribe(onEvaluated);
}
