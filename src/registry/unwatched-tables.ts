/**
 * A table the program made and used that never reached dispatch-hook, while a plugin declares a
 * registration module for its backend: that module never ran for it, so nothing of the plugin's is
 * in the table. Usually the framework's declaration names another module than the one that makes the
 * table. Pure, for buildReport().
 */
import type { PluginStatus } from "../channel.js";
import type { Problem } from "./audit-events.js";

interface Facts {
  readonly unannounced?: ReadonlyArray<{ readonly backend: string; readonly name: string; readonly used?: boolean }>;
  readonly loaders: readonly unknown[];
  readonly hosts?: readonly string[];
}

/** One problem per such backend, unless another problem names the backend already (a registration waiting for it says it). */
export function unwatchedTables(
  facts: Facts,
  plugins: readonly PluginStatus[],
  loaded: ReadonlySet<string>,
  problems: readonly Problem[],
): Problem[] {
  const tables = new Map<string, string[]>();
  for (const d of facts.unannounced ?? []) {
    if (d.used === false || loaded.has(d.backend) || problems.some((p) => p.backend === d.backend)) continue;
    tables.set(d.backend, [...(tables.get(d.backend) ?? []), JSON.stringify(d.name)]);
  }
  const out: Problem[] = [];
  for (const [backend, names] of tables) {
    const declaring = [...new Set(plugins.filter((p) => p.registrations[backend] !== undefined).map((p) => p.name))];
    if (declaring.length === 0) continue;
    const modules = `the registration module${declaring.length === 1 ? "" : "s"} of ${declaring.join(", ")} for ${backend}`;
    const host = facts.loaders.length === 0 ? facts.hosts?.[0] : undefined;
    const why =
      host === undefined
        ? `no module the loader watches made it, so ${modules} never ran for it. Declare the module that makes it in the framework's package.json ("dispatchHook": { "backends": … }; npx dispatch-hook doctor shows what is watched), or announce it: announce(${JSON.stringify(backend)}, table).`
        : `${host} never saw the module that made it, so ${modules} never ran for it. A dispatch module that a CommonJS module require()s is loaded by Node itself, out of ${host}'s sight: run the tests with the loader as well (NODE_OPTIONS="--import dispatch-hook/loader.mjs" and dispatchHook({ inline: false }), on Node 22.15 or later, whose hooks see require()). Otherwise the framework's declaration names another module (npx dispatch-hook doctor).`;
    const message = `the ${backend} table (Dispatcher ${names.join(", ")}) was made and used, but never reached dispatch-hook: ${why}`;
    out.push({ kind: "table", backend, op: "-", id: undefined, message });
  }
  return out;
}
