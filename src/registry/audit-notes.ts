/** The notes under a report: what the thread's loaders and host adapters watch, each backend's state, and why nothing registered. Pure. */
import type { HostFacts, InstallationStatus } from "../channel.js";
import type { BackendRecord } from "./audit-events.js";
import { getOrCreate } from "./audit-fold.js";
import { didYouMean } from "./options.js";

/** What the notes read of the thread's facts (ThreadFacts, in audit-report.ts). */
interface Facts {
  readonly tables: ReadonlyArray<{ readonly backend: string; readonly host?: HostFacts | undefined }>;
  readonly loaders: readonly InstallationStatus[];
  readonly hosts?: readonly string[];
  readonly unusable?: ReadonlyArray<{ readonly backend: string }>;
  readonly unannounced?: ReadonlyArray<{ readonly backend: string }>;
}

export function notes(
  facts: Facts,
  backends: readonly BackendRecord[],
  registrations: number,
  outside: number,
  scope: { readonly connected: boolean },
): string[] {
  const out: string[] = [];
  if (scope.connected) {
    for (const loader of facts.loaders) {
      const declared = loader.declarations ?? [];
      out.push(
        `loader (${loader.mode}) read ${loader.files?.length ?? 0} file(s) from ${loader.root ?? "?"}; it watches ${declared.length === 0 ? "nothing" : declared.join("; ")}`,
      );
    }
    const hosts = new Map<string, Set<string>>();
    for (const table of facts.tables)
      if (table.host !== undefined) getOrCreate(hosts, table.host.name, () => new Set<string>()).add(table.backend);
    for (const [host, names] of hosts) out.push(`${host} instrumented the dispatch modules of ${[...names].sort().join(", ")}`);
    for (const host of facts.hosts ?? []) if (!hosts.has(host)) out.push(`${host} serves this thread; none of its modules loaded`);
    if (facts.loaders.length + hosts.size + (facts.hosts ?? []).length === 0)
      out.push("no dispatch-hook loader is installed in this thread");
  }
  // A dispatch module the loader knows loaded but never signalled (required where its hooks cannot see require()), or that lacks its declared export.
  const unseen = new Set(facts.loaders.flatMap((l) => (l.findings ?? []).filter((f) => f.problem === "unsignalled").map((f) => f.backend)));
  const exportless = new Set((facts.unusable ?? []).map((u) => u.backend));
  const made = new Set((facts.unannounced ?? []).map((d) => d.backend));
  const state = (b: BackendRecord) =>
    b.loaded
      ? `loaded (${b.tables} table${b.tables === 1 ? "" : "s"})`
      : unseen.has(b.backend)
        ? "loaded, never signalled (see below)"
        : exportless.has(b.backend)
          ? "loaded, no table at its declared export"
          : made.has(b.backend)
            ? "made, never reached dispatch-hook"
            : "not loaded";
  if (backends.length > 0) out.push(`backends: ${backends.map((b) => `${b.backend} ${state(b)}`).join(", ")}`);
  // A plugin's registration module for a backend no loader watches never loads (a typo, or a framework not installed).
  const named = new Set(facts.loaders.flatMap((l) => l.backends));
  const watching = (backend: string) => named.has(backend) || named.has("{backend}");
  if (scope.connected && named.size > 0) {
    // A set of lines: two installations (a copy of each version) report the same plugins.
    const unwatched = new Set<string>();
    const lines = new Set<string>();
    for (const plugin of facts.loaders.flatMap((l) => l.plugins ?? [])) {
      for (const backend of Object.keys(plugin.registrations)) {
        if (watching(backend)) continue;
        unwatched.add(backend);
        const near = didYouMean(backend, [...named]);
        lines.add(
          `${plugin.name} declares a registration module for ${backend}${near}, but nothing declares a ${backend} backend: it never loads`,
        );
      }
    }
    out.push(...lines);
    // Registered in code for a backend a typo away from a watched one (one far from all may be loaded some other way).
    for (const b of backends) {
      const near = b.loaded || watching(b.backend) || unwatched.has(b.backend) ? "" : didYouMean(b.backend, [...named]);
      if (near !== "") out.push(`${b.backend} is no backend the loader watches${near}; what waits for it waits for good`);
    }
  }
  if (registrations === 0) {
    const watchedBackends = backends.filter((b) => watching(b.backend));
    const watched = watchedBackends.length;
    const loadedCount = watchedBackends.filter((b) => b.loaded).length;
    // Loaded but never signalled is said on the backends line; here, apart from those that loaded and signalled.
    const silent = watchedBackends.filter((b) => !b.loaded && unseen.has(b.backend)).length;
    const also = silent === 0 ? "" : `; ${silent} loaded without signalling`;
    // Entries a plugin wrote into a table directly are counted above, and the verdict may be "ok":
    // the note says where they came from rather than suggest that nothing happened.
    const direct =
      outside === 0
        ? ""
        : ` through a registry (${outside} ${outside === 1 ? "entry was" : "entries were"} written into tables directly, outside it)`;
    out.push(
      `no registrations were made${direct}${scope.connected && facts.loaders.length > 0 ? `; the loader watched ${watched} named backend${watched === 1 ? "" : "s"}, ${loadedCount === 0 ? "none" : loadedCount} loaded${also}` : ""}`,
    );
  }
  return out;
}
