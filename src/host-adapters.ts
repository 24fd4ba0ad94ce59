/**
 * Host adapters that told the thread they serve it before any of their modules loaded: the Vite
 * plugin's setup file, the Jest resolver, which runs in the worker that runs the tests, and a bundle
 * the esbuild plugin built (its `define` names it in the bundled copy of this module). Shared by
 * every copy in the thread. @internal
 */
import { hostsKey } from "./channel.js";
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
