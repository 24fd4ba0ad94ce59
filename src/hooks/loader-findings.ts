/**
 * What a loader could not see or do, asked fresh each time (a module that signals later drops out):
 * modules it could not instrument, watched modules that loaded but never signalled, where the hooks do
 * not see require() (module.register) watched modules that require() loaded, and plugins it learned of
 * only after a table of their backend had loaded without their registration module.
 */
import { nodeModule, url } from "../builtins.js";
import type { LoaderFinding } from "../channel.js";
import { hub } from "../hub.js";
import type { PluginDeclaration } from "./declarations.js";
import type { HookMode } from "./hook-mode.js";
import type { Matcher } from "./matcher.js";

export interface LoaderRecord {
  readonly mode: HookMode;
  /** Watched modules the hooks generated a facade for, or instrumented: URL → backend. */
  /** null: the module signalled once (its table may have been collected since). */
  readonly loaded: ReadonlyMap<string, string | null>;
  readonly failures: ReadonlyMap<string, LoaderFinding>;
  readonly matcher: Matcher;
  readonly unresolved: ReadonlyMap<string, string>;
  /** Backend → the names of the plugins a module of it was served with (joined by "\n") → the first such module. */
  readonly served: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** Registration modules the hooks resolved, wherever from (a facade, or the app importing one itself; an import.meta.resolve() too). */
  readonly registrationsResolved: ReadonlySet<string>;
  /** The plugins the loader knows of now. */
  readonly plugins: readonly PluginDeclaration[];
}

export function loaderFindings(record: LoaderRecord): LoaderFinding[] {
  const signalled = new Set(
    hub()
      .allTables()
      .flatMap((n) => (n.via === "hook" ? [n.module] : [])),
  );
  const out: LoaderFinding[] = [...record.failures.values(), ...latePlugins(record)];
  for (const [href, backend] of record.loaded) {
    if (backend === null || signalled.has(href) || record.failures.has(href)) continue;
    const cause = record.unresolved.get(backend);
    out.push({
      backend,
      module: href,
      problem: "unsignalled",
      message:
        cause === undefined
          ? `${href} was loaded but never finished evaluating (it threw, an import in its graph failed, or it is still waiting in an import cycle), so its ${backend} table never signalled.`
          : `${href} never finished evaluating, so its ${backend} table never signalled: ${cause}.`,
    });
  }
  if (record.mode === "registerHooks") return out;
  // Node 20's off-thread hooks never see require(). Say so for every watched module that require()
  // loaded, instead of staying silent.
  for (const filename of Object.keys(requireCache())) {
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

function requireCache(): NodeJS.Dict<NodeJS.Module> {
  return nodeModule.createRequire(import.meta.url).cache;
}

/**
 * A plugin the loader learned of only after a module of its backend had loaded without its registration
 * module (one that only a dependency of the app depends on, found when the program first imports it), whose
 * registration module has not loaded since: nothing it registers reached that table. A plugin that declares what it
 * expects on the backend is judged by that instead.
 */
function latePlugins(record: LoaderRecord): LoaderFinding[] {
  const out: LoaderFinding[] = [];
  const named = new Set<string>();
  for (const [backend, sets] of record.served)
    for (const [names, href] of sets) {
      const plugins = names.split("\n");
      for (const plugin of record.plugins) {
        const module = plugin.registrations[backend];
        if (module === undefined || plugins.includes(plugin.name) || named.has(`${plugin.name}\0${backend}`)) continue;
        // What it expects there is checked on its own: the app may have registered it another way (its explicit route).
        if ((plugin.expects[backend]?.length ?? 0) > 0) continue;
        // Resolved some other way since (the app imported it; require() where the hooks do not see it): taken to have run.
        if (
          record.registrationsResolved.has(module) ||
          (module.startsWith("file:") && requireCache()[url.fileURLToPath(module)] !== undefined)
        )
          continue;
        named.add(`${plugin.name}\0${backend}`);
        out.push({
          backend,
          module: href,
          problem: "late-plugin",
          message:
            `${plugin.name}'s registration module for ${backend} (${module}) never ran: the loader learned of ${plugin.name} (${plugin.declaredIn}) ` +
            `only after ${href} had loaded without it. The loader reads the app's dependencies, and those of packages that depend on a framework, before anything loads; ` +
            `${plugin.name} is neither. Add it to the app's dependencies, or import it before the backend loads`,
        });
      }
    }
  return out;
}
