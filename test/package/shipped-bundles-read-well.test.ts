/**
 * The bundles only the loader loads are minified (bench/RESULTS.md §10). What a user still reads of
 * them: an uncaught error prints its source line, which stays one short line, and its message and code.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const bundles = join(__dirname, "../../dist/bundle");

describe("the loader's minified bundles", () => {
  it("an uncaught error from one prints a short source line, its message and its code", () => {
    const install = pathToFileURL(join(bundles, "install.js")).href;
    const source = `import { install } from ${JSON.stringify(install)};\ninstall({ mode: "bogus" });\n`;
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", source], { encoding: "utf8" });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('install(): "mode" must be one of "registerHooks", "register", got "bogus".');
    expect(result.stderr).toContain("ERR_DISPATCH_INVALID_OPTION");
    const longest = Math.max(...result.stderr.split("\n").map((line) => line.length));
    expect(longest).toBeLessThan(400);
  });

  it("have no line longer than a screen's few widths", () => {
    for (const name of ["install.js", "hooks-thread.js", "runtime.js", "runtime.cjs"]) {
      const lines = readFileSync(join(bundles, name), "utf8").split("\n");
      expect(Math.max(...lines.map((line) => line.length)), name).toBeLessThan(400);
    }
  });
});
