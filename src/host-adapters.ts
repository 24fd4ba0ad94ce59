/**
 * Host adapters that told the thread they serve it before any of their modules loaded: the Vite
 * plugin's setup file, the Jest resolver, which runs in the worker that runs the tests, and a bundle
 * the esbuild plugin built (its `define` names it in the bundled copy of this module). Shared by
 * every copy in the thread. @internal
 */
import { hostsKey, type PluginStatus } from "./channel.js";
import { hub } from "./hub.js";

/** The identifier the esbuild plugin defines in a bundle it builds. */
export const builtByDefine = "__DISPATCH_HOOK_BUILT_BY__";
declare const __DISPATCH_HOOK_BUILT_BY__: string | undefined;
const builtBy = typeof __DISPATCH_HOOK_BUILT_BY__ === "string" ? __DISPATCH_HOOK_BUILT_BY__ : undefined;

export const hostAdapters = (): Set<string> => {
  const hosts = hub().shared(hostsKey, () => new Set<string>());
  if (builtBy !== undefined) hosts.add(builtBy);
  return hosts;
};

/** The key under which dispatch-hook/vite provides the project's plugins to Vitest's workers (`provide` / `inject`). */
export const pluginsKey = "dispatch-hook/plugins";

/**
 * The plugins a host adapter read from the project's declarations, for a thread where a framework's
 * table may never reach the adapter (a CommonJS module that another one require()s, under Vitest):
 * the audit then knows whose registration module never ran for it. Shared by every copy. @internal
 */
export const hostPlugins = (): PluginStatus[] => hub().shared("host-plugins@1", () => []);
