import { fileURLToPath } from "node:url";
import { defineConfig, type Plugin } from "vitest/config";

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

export default defineConfig({
  plugins: [runBuiltModules],
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/setup.ts"],
    // Threads, not forks: a worker thread writes its V8 coverage when it ends, which c8 needs.
    pool: "threads",
    server: { deps: { external: [/\/dist\//] } },
    testTimeout: 30_000,
    reporters: ["default", "./scripts/summary-reporter.mjs"],
  },
});
