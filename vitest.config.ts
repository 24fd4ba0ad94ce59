import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig, type Plugin } from "vitest/config";

const root = fileURLToPath(new URL(".", import.meta.url));

/**
 * Tests import `src/**` for their types, but run the built `dist/**` module beside it, loaded by
 * Node itself. That way the code under test is the code we ship, and c8 sees it (with source maps
 * back to src/) exactly as it sees the node processes that the integration tests start.
 */
const runBuiltModules: Plugin = {
  name: "dispatch-hook:run-built-modules",
  enforce: "pre",
  async resolveId(id, importer) {
    if (importer === undefined || !id.startsWith(".")) return null;
    const resolved = await this.resolve(id, importer, { skipSelf: true });
    if (resolved === null || !resolved.id.startsWith(`${root}src/`) || !resolved.id.endsWith(".ts")) return null;
    return { id: `${root}dist/${resolved.id.slice(root.length + 4, -3)}.js`, external: true };
  },
};

/**
 * The slow suites: real Vitest, Jest and esbuild projects, the packed tarball, the corpus of real
 * packages, the Node-version matrix, other loaders (tsx, import-in-the-middle), and the suites that
 * start the most processes (whole runs, every copy and version pairing, every environment value).
 * `npm test` leaves them out, to stay fast; `npm run test:full` (DISPATCH_HOOK_TESTS=slow) runs just
 * them, then the integration suite on other Node versions (DISPATCH_HOOK_TESTS=full, every file).
 * CI runs both.
 */
const slow = [
  "test/integration/vitest-host.test.ts",
  "test/integration/vitest-helpers.test.ts",
  "test/integration/jest-host.test.ts",
  "test/integration/esbuild-host.test.ts",
  "test/integration/run-reporters.test.ts",
  "test/integration/pack.test.ts",
  "test/integration/corpus.test.ts",
  "test/integration/matrix.test.ts",
  "test/integration/other-loaders.test.ts",
  "test/integration/run-audit.test.ts",
  "test/integration/hub-defects.test.ts",
  "test/integration/environment.test.ts",
  "test/integration/invisible.test.ts",
];
const which = process.env.DISPATCH_HOOK_TESTS;

export default defineConfig({
  plugins: [runBuiltModules],
  test: {
    include: which === "slow" ? slow : ["test/**/*.test.ts"],
    exclude: which === "slow" || which === "full" ? configDefaults.exclude : [...configDefaults.exclude, ...slow],
    setupFiles: ["test/setup.ts"],
    // Threads, not forks: a worker thread writes its V8 coverage when it ends, which c8 needs.
    pool: "threads",
    // One worker per core, not Vitest's default of one fewer: most of a test's time is a child
    // process's, while its worker waits (on two cores the default is a single worker).
    maxWorkers: "100%",
    server: { deps: { external: [/\/dist\//] } },
    testTimeout: 30_000,
    reporters: ["default", "./scripts/summary-reporter.mjs"],
  },
});
