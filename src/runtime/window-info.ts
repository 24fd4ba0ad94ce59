/** How a registration window is named: one per dispatch module instance and registration module. */
import type { ModuleInfo, WindowInfo } from "../channel.js";

export interface PlannedModule {
  readonly plugin: string;
  /** File URL of the registration module. */
  readonly url: string;
}

export function windowInfo(module: ModuleInfo, registration: PlannedModule): WindowInfo {
  return {
    id: `${module.url} ${registration.url}`,
    url: module.url,
    backend: module.backend,
    plugin: registration.plugin,
    module: registration.url,
  };
}
