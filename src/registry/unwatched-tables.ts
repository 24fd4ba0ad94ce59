/**
 * A table the program made and used that never reached dispatch-hook, while a plugin declares a
 * registration module for its backend: that module never ran for it, so nothing of the plugin's is
 * in the table. Usually the framework's declaration names another module, or another export, than the
 * one that makes the table the framework dispatches through. Pure, for buildReport().
 */
import type { PluginStatus } from "../channel.js";
import type { Problem } from "./audit-events.js";

interface Facts {
  readonly unannounced?: ReadonlyArray<{
    readonly backend: string;
    readonly name: string;
    readonly used?: boolean;
    readonly ops?: readonly string[];
    readonly exported?: boolean;
  }>;
  readonly loaders: readonly unknown[];
  readonly hosts?: readonly string[];
}

/** One problem per such backend, unless another problem or a loader's finding explains the backend already (a registration waiting for it, a require() the hooks could not see). */
export function unwatchedTables(
  facts: Facts,
  plugins: readonly PluginStatus[],
  loaded: ReadonlySet<string>,
  explained: (backend: string) => boolean,
  registered: ReadonlyMap<string, ReadonlySet<string>>,
): Problem[] {
  const tables = new Map<string, string[]>();
  for (const d of facts.unannounced ?? []) {
    if (d.used === false || explained(d.backend)) continue;
    // Beside a table of the backend that reached dispatch-hook, only one a watched module exports beside it (a framework's
    // own tables elsewhere, a gradient rules' Dispatcher, are its business) lacking what was registered there (a copy made
    // of that table after the registrations landed holds them).
    if (
      loaded.has(d.backend) &&
      (d.exported !== true || [...(registered.get(d.backend) ?? [])].every((op) => d.ops?.includes(op) === true))
    )
      continue;
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
    // Another table of the backend reached dispatch-hook (the declared export, say), and the plugins' registrations went there.
    const beside = loaded.has(backend)
      ? `another ${backend} table did, and what ${declaring.join(", ")} ${declaring.length === 1 ? "registers" : "register"} went there, not into this one. If the framework dispatches through this one, declare it as the module's export in the framework's package.json, or announce it: announce(${JSON.stringify(backend)}, table)`
      : why;
    const message = `the ${backend} table (Dispatcher ${names.join(", ")}) was made and used, but never reached dispatch-hook: ${beside}`;
    out.push({ kind: "table", backend, op: "-", id: undefined, message });
  }
  return out;
}
