// Protocol types asked per value, in a real process, with and without generated code: a plain
// object that satisfies a backend's protocol must not send every later plain object there.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lastJson, makeTree, repoRoot, run } from "./fixture.js";

const script = `
import * as api from ${JSON.stringify(join(repoRoot, "dist/index.js"))};
import { run } from ${JSON.stringify(join(repoRoot, "test/fixtures/protocol-values.mjs"))};
console.log(JSON.stringify(run(api)));
`;

describe("protocol types decided per value (real process)", () => {
  for (const flags of [[], ["--disallow-code-generation-from-strings"]]) {
    it(`sends each value where its own answer says${flags.length ? " (no code generation)" : ""}`, async () => {
      const dir = makeTree({ "main.mjs": script });
      const result = await run(dir, [...flags, "main.mjs"]);
      expect(result.stderr).toBe("");
      const out = lastJson(result.stdout) as { calls: number; wrong: string[] };
      expect(out.calls).toBe(300);
      expect(out.wrong).toEqual([]);
    });
  }
});

describe("caches keyed by classes (real process)", () => {
  it("100,000 short-lived classes through dispatchables leave the heap where it was after gc", async () => {
    const dir = makeTree({});
    const result = await run(dir, [
      "--expose-gc",
      join(repoRoot, "test/fixtures/short-lived-classes.mjs"),
      join(repoRoot, "dist/index.js"),
    ]);
    expect(result.stderr).toBe("");
    const out = lastJson(result.stdout) as { growth: number; sink: boolean };
    expect(out.sink).toBe(true);
    // Kept, one class would cost about a kilobyte: 100,000 of them some 100 MB. A cache may hold
    // up to 1,024 of them before it starts over (about 1 MB), so the bound is 2 MB: 50 times
    // under keeping them all. At 1 MB exactly this failed now and then at 1.06 MB.
    expect(out.growth).toBeLessThan(2 * 2 ** 20);
  });
});
