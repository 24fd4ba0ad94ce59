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

// null and undefined (never relevant) and a null-prototype object (decided on its own) must not share
// one cached decision: the answer would then depend on which of them a set saw first.
const nullish = `
import { createBackends, dispatchable } from ${JSON.stringify(join(repoRoot, "dist/index.js"))};
const make = (name) => {
  const set = createBackends({ name, discover: false });
  set.declare({ name: "str", primaryTypes: [String], implementations: { g: () => "str" } });
  return dispatchable(function g(x, y) { return "default"; }, { args: ["x", "y"], backends: set });
};
const attempt = (f, ...args) => { try { return f(...args); } catch (error) { return error.code; } };
const bare = () => Object.create(null);
let g = make("a");
const alone = [attempt(g, bare(), "s"), attempt(g, null, "s")];
g = make("b");
const nullFirst = [attempt(g, null, "s"), attempt(g, bare(), "s"), attempt(g, undefined, "s")];
g = make("c");
const bareFirst = [attempt(g, bare(), "s"), attempt(g, undefined, "s"), attempt(g, bare(), "s")];
console.log(JSON.stringify({ alone, nullFirst, bareFirst }));
`;

describe("null, undefined and a null-prototype object (real process)", () => {
  for (const flags of [[], ["--disallow-code-generation-from-strings"]]) {
    it(`each decided on its own, whichever comes first${flags.length ? " (no code generation)" : ""}`, async () => {
      const dir = makeTree({ "main.mjs": nullish });
      const result = await run(dir, [...flags, "main.mjs"]);
      expect(result.stderr).toBe("");
      const mixed = "ERR_DISPATCH_MIXED_INPUTS";
      expect(lastJson(result.stdout)).toEqual({
        alone: [mixed, "str"],
        nullFirst: ["str", mixed, "str"],
        bareFirst: [mixed, "str", mixed],
      });
    });
  }
});

describe("scopes entered in a long synchronous loop (real process)", () => {
  it("1,000,000 backendOptions() calls keep nothing per call until the event loop turns", async () => {
    const dir = makeTree({});
    const result = await run(dir, ["--expose-gc", join(repoRoot, "test/fixtures/scopes-in-a-loop.mjs"), join(repoRoot, "dist/index.js")]);
    expect(result.stderr).toBe("");
    const out = lastJson(result.stdout) as { growth: number; sink: boolean };
    expect(out.sink).toBe(true);
    // A finalization record per scope kept about 72 bytes a call until the loop turned: some 80 MB here.
    expect(out.growth).toBeLessThan(2 * 2 ** 20);
  });
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
