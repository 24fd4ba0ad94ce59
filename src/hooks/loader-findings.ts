/**
 * What a loader could not see or do, worked out when someone asks (an audit, a miss): modules it
 * could not instrument, watched modules that loaded but never signalled, and, where the hooks do
 * not see require() (module.register), watched modules that require() loaded. Asked fresh each
 * time, so a module that signals later is no longer reported.
 */
import { nodeModule, url } from "../builtins.js";
import type { LoaderFinding } from "../channel.js";
import { hub } from "../hub.js";
import type { HookMode } from "./hook-mode.js";
import type { Matcher } from "./matcher.js";

export interface LoaderRecord {
  readonly mode: HookMode;
  /** Watched modules the hooks generated a facade for, or instrumented: URL → backend. */
  readonly loaded: ReadonlyMap<string, string>;
  readonly failures: ReadonlyMap<string, LoaderFinding>;
  readonly matcher: Matcher;
}

export function loaderFindings(record: LoaderRecord): LoaderFinding[] {
  const signalled = new Set(
    hub()
      .allTables()
      .flatMap((n) => (n.via === "hook" ? [n.module] : [])),
  );
  const out: LoaderFinding[] = [...record.failures.values()];
  for (const [href, backend] of record.loaded) {
    if (signalled.has(href) || record.failures.has(href)) continue;
    out.push({
      backend,
      module: href,
      problem: "unsignalled",
      message: `${href} was loaded but never finished evaluating (it threw, an import in its graph failed, or it is still waiting in an import cycle), so its ${backend} table never signalled.`,
    });
  }
  if (record.mode === "registerHooks") return out;
  // Node 20's off-thread hooks never see require(). Say so for every watched module that require()
  // loaded, instead of staying silent.
  const cache = nodeModule.createRequire(import.meta.url).cache;
  for (const filename of Object.keys(cache)) {
    const href = url.pathToFileURL(filename).href;
    if (signalled.has(href) || record.loaded.has(href)) continue;
    const plan = record.matcher.match(href);
    if (plan === undefined) continue;
    out.push({
      backend: plan.backend,
      module: href,
      problem: "unsignalled",
      message:
        `${href} was loaded with require(), which the ${record.mode} hooks of Node ${process.versions.node} cannot see, so its ${plan.backend} table never signalled. ` +
        "Import it before anything require()s it (a module require() loaded first stays without its facade), or run Node >=22.22.3 or >=24.11.1, where dispatch-hook uses module.registerHooks and sees require().",
    });
  }
  return out;
}
