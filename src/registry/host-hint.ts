import { hub } from "../hub.js";
import { noticeTable } from "../table-reads.js";

/** The line a miss adds under a test runner that loads modules itself (Vitest, Jest) with no adapter, if it runs under one. */
export function hostHint(): string | undefined {
  // An adapter's generated modules announced a table here: one is installed, whatever else is missing.
  if (
    hub()
      .allTables()
      .some((notice) => notice.via === "hook" && notice.host !== undefined)
  )
    return undefined;
  // What Vitest and Jest put in their test files' globals: not variables, which child processes inherit.
  const globals = globalThis as { __vitest_worker__?: unknown; jest?: unknown; expect?: unknown };
  if (globals.__vitest_worker__ !== undefined) {
    return 'no dispatch-hook adapter is installed in this Vitest run: Vitest loads these modules itself, where Node\'s loader never sees them. Add plugins: [dispatchHook()] (import { dispatchHook } from "dispatch-hook/vite") to vitest.config.';
  }
  // Jest 29 gives each module a `jest` of its own, not a global, but its test files' global `expect`
  // and JEST_WORKER_ID together name it (a child process a test starts has the variable, not the global).
  if (globals.jest !== undefined || (process.env.JEST_WORKER_ID !== undefined && typeof globals.expect === "function")) {
    return 'no dispatch-hook adapter is installed in this Jest run: Jest loads these modules itself. Add "resolver": "dispatch-hook/jest" to the Jest config.';
  }
  return undefined;
}

/** What a miss says when no loader is installed: what a host adapter knew of the table, if one instrumented it. */
export function withoutLoader(table: object): string {
  for (const notice of hub().allTables()) {
    if (notice.via !== "hook" || notice.host === undefined || noticeTable(notice) !== table) continue;
    const backend = notice.backend;
    const declaring = notice.host.plugins.flatMap((p) =>
      p.registrations[backend] === undefined ? [] : [`${p.name} (${p.registrations[backend]})`],
    );
    return `${notice.host.name} instrumented this table's module; ${declaring.length === 0 ? `no plugin it found declares a registration module for ${backend}` : `it loaded the registration modules of ${declaring.join(", ")}`}.`;
  }
  const host = hostHint();
  if (host !== undefined) return `${host.charAt(0).toUpperCase()}${host.slice(1)}`;
  return "No dispatch-hook loader is installed in this thread (node --import dispatch-hook/loader.mjs), so no declared registration module was loaded for this backend.";
}
