/**
 * What loader.mjs imports to get install(): the same code as loader-entry.ts, built a second time as
 * a script (dist/bundle/install.script.js) and run through the code cache, so that a process does
 * not parse and compile it again (code-cache.ts says why and where).
 */
import { url } from "../builtins.js";
import { DispatchHookError } from "../registry/errors.js";
import { chooseCacheDir, packageDirOf, runCached } from "./code-cache.js";
import type * as entry from "./loader-entry.js";

type Entry = typeof entry;
/** The script's completion value: a function that fills a CommonJS-shaped module, given its URL. */
type ScriptFunction = (module: { exports: Partial<Entry> }, exports: Partial<Entry>, moduleUrl: string) => void;

/** Loads install() from the script beside this module (`script` for tests). */
export function bootInstall(script = new URL("./install.script.js", import.meta.url)): Entry["install"] {
  const dir = chooseCacheDir(process.env.DISPATCH_HOOK_CODE_CACHE, packageDirOf(import.meta.url));
  const cached = runCached(url.fileURLToPath(script), dir);
  const module: { exports: Partial<Entry> } = { exports: {} };
  (cached.value as ScriptFunction)(module, module.exports, script.href);
  const { install } = module.exports;
  if (typeof install !== "function") {
    throw new DispatchHookError("ERR_DISPATCH_HOOK_DAMAGED", `${script.href} did not define install(); reinstall dispatch-hook.`);
  }
  // The cache is written once the hooks' code has run (see InstallOptions.onSettled).
  return (options) => install({ ...options, onSettled: cached.save });
}
