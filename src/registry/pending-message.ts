/**
 * Why a registration still waits, and why an expected op is missing, in words that say what
 * dispatch-hook knows of the backend: a loader's finding, a table that exists, a Dispatcher that never
 * reached dispatch-hook, or no loader at all.
 */
import type { RegistrationRecord } from "./audit-events.js";

/** What these messages read of the thread's facts (ThreadFacts, in audit-report.ts). */
interface Facts {
  readonly tables: ReadonlyArray<{ readonly host?: { readonly name: string } | undefined }>;
  readonly loaders: readonly unknown[];
  readonly unannounced?: ReadonlyArray<{ readonly backend: string; readonly name: string }>;
  /** Host adapters that said they serve the thread before any of their modules loaded (Vitest's setup file). */
  readonly hosts?: readonly string[];
}

/** The host adapter serving the thread's modules where no loader is installed (Vite, Vitest, esbuild, Jest), if one is known. */
export const hostOf = (facts: Facts): string | undefined => facts.tables.find((t) => t.host !== undefined)?.host?.name ?? facts.hosts?.[0];

export function pendingMessage(
  record: RegistrationRecord,
  facts: Facts,
  loaded: boolean,
  unsignalled: string | undefined,
  asserted: boolean,
): string {
  const at = `${record.op} on ${record.backend} (registered at ${record.site}) is still pending${asserted && !loaded ? `, and the program named ${record.backend} to assertComplete()` : ""}`;
  if (unsignalled !== undefined) return `${at}: ${unsignalled}`;
  if (loaded) return `${at} although a ${record.backend} table exists in this thread.`;
  const stray = strayText(record.backend, facts);
  if (stray !== undefined) return `${at}: ${stray}`;
  const host = hostOf(facts);
  if (facts.loaders.length === 0 && host === undefined) {
    return `${at}: no ${record.backend} table ever reached dispatch-hook, and no dispatch-hook loader is installed in this thread. Start node with --import dispatch-hook/loader.mjs, run it through a host adapter, or have the framework call announce().`;
  }
  const serving = facts.loaders.length > 0 ? "the loader is installed" : `${host} serves this thread's modules`;
  return `${at}: no ${record.backend} table ever reached dispatch-hook; ${serving}, but no module declared for ${record.backend} finished loading. Check the declaration with npx dispatch-hook doctor.`;
}

/** What to say of a backend's Dispatchers that never reached dispatch-hook, if there are any. */
export function strayText(backend: string, facts: Facts): string | undefined {
  const names = (facts.unannounced ?? []).filter((d) => d.backend === backend).map((d) => `Dispatcher ${JSON.stringify(d.name)}`);
  if (names.length === 0) return undefined;
  const fix =
    facts.loaders.length === 0 && hostOf(facts) === undefined
      ? `no dispatch-hook loader is installed in this thread to watch the module that made it. Start node with --import dispatch-hook/loader.mjs, run it through a host adapter, or have the framework call announce(${JSON.stringify(backend)}, table).`
      : "nothing watches the module that made it (the framework's declaration names another module, or none). Check the declaration with npx dispatch-hook doctor.";
  return `a ${backend} table exists in this thread (${[...new Set(names)].join(", ")}), but it never reached dispatch-hook: ${fix}`;
}
