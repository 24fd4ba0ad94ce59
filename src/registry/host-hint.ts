import { hub } from "../hub.js";

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
