/**
 * The corpus: every entry point of every installed package (vitest, vite, esbuild, typescript,
 * fast-check, acorn, c8 and all they depend on), loaded once plainly and once with every module
 * under node_modules behind a facade (and every CommonJS module given the epilogue, where the hooks
 * see require()). Export names and values must be identical: no exception, on any Node version.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hookMode } from "../../src/hooks/hook-mode.js";
import { makeTree, nodeVersion, repoRoot, run } from "./fixture.js";

const check = join(repoRoot, "test/fixtures/corpus/check.mjs");
const register = join(repoRoot, "test/fixtures/corpus/register.mjs");

interface Outcome {
  readonly modules: number;
  readonly stats?: { instrumented: number; failed: string[] };
  readonly result: Record<string, string | string[]>;
}

describe(`the corpus on Node ${nodeVersion}`, () => {
  it("instrumenting every module changes no export name or value", async () => {
    const out = makeTree({});
    const [plainFile, hookedFile] = [join(out, "plain.json"), join(out, "hooked.json")];
    await Promise.all([run(repoRoot, [check, repoRoot, plainFile]), run(repoRoot, ["--import", register, check, repoRoot, hookedFile])]);
    const a = JSON.parse(readFileSync(plainFile, "utf8")) as Outcome;
    const b = JSON.parse(readFileSync(hookedFile, "utf8")) as Outcome;
    const stats = b.stats as { instrumented: number; failed: string[] };
    const entries = Object.keys(a.result);
    const differing = entries.filter((key) => JSON.stringify(a.result[key]) !== JSON.stringify(b.result[key]));
    console.log(
      `corpus on Node ${nodeVersion} (${hookMode(nodeVersion)}): ${entries.length} entry points, ${a.modules} loaded, ${stats.instrumented} modules behind a facade or instrumented, ${differing.length} differ`,
    );
    expect(entries.length).toBeGreaterThan(150);
    expect(stats.instrumented).toBeGreaterThan(300);
    expect(stats.failed).toEqual([]);
    expect(differing.map((key) => ({ key, plain: a.result[key], hooked: b.result[key] }))).toEqual([]);
  });
});
