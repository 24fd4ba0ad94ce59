// What a backend set takes from its callers and declarers, in a real process, with and without generated
// code: each defect here was found by a reviewer's trial, and each gave a silent wrong answer or a raw error.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lastJson, makeTree, repoRoot, run } from "./fixture.js";

const api = JSON.stringify(join(repoRoot, "dist/index.js"));
const modes = [[], ["--disallow-code-generation-from-strings"]] as const;

/** Runs `body` (an ES module that imports the API as `api`) and gives its last JSON line. */
async function outcome(body: string, flags: readonly string[] = [], env: Record<string, string> = {}) {
  const dir = makeTree({ "main.mjs": `import * as api from ${api};\n${body}` });
  const result = await run(dir, [...flags, "main.mjs"], env);
  expect(result.stderr).toBe("");
  return lastJson(result.stdout);
}

const arrays = [
  "const { createBackends, dispatchable, backendOptions } = api;",
  "class NpArray {} class CpArray {}",
  "const attempt = (f) => { try { return f(); } catch (e) { return e.code ?? `raw ${e.constructor.name}: ${e.message}`; } };",
].join("\n");

describe("a rest parameter named in args", () => {
  // (...arrays) with args: ["arrays"] decided on the first argument alone: stack(np, cp) ran numpy, stack(1, cp) the reference.
  for (const flags of modes) {
    it(`stands for every argument from its place${flags.length ? " (no code generation)" : ""}`, async () => {
      const out = await outcome(
        [
          arrays,
          'const S = createBackends({ name: "rest", discover: false });',
          'S.declare({ name: "numpy", primaryTypes: [NpArray], implementations: { stack: () => "numpy" } });',
          'S.declare({ name: "cupy", primaryTypes: [CpArray], implementations: { stack: () => "cupy" } });',
          'const stack = dispatchable((axis, ...arrays) => "reference", { name: "stack", args: ["arrays"], backends: S });',
          "console.log(JSON.stringify({",
          "  mixed: attempt(() => stack(0, new NpArray(), new CpArray())),",
          "  cupy: attempt(() => stack(0, new CpArray(), new CpArray())),",
          "  number: attempt(() => stack(0, 1, new CpArray())),",
          "  numpy: attempt(() => stack(0, new NpArray(), new NpArray())),",
          "  none: attempt(() => stack(0)),",
          "}));",
        ].join("\n"),
        flags,
      );
      expect(out).toEqual({
        mixed: "ERR_DISPATCH_MIXED_INPUTS",
        cupy: "cupy",
        number: "ERR_DISPATCH_MIXED_INPUTS",
        numpy: "numpy",
        none: "reference",
      });
    });
  }
});

describe("a set's environment variables", () => {
  // SC_BLOCK set after the first call was ignored until an unrelated registration made the set read it again; then an
  // unset variable was ignored in turn. An invalid value, set late, failed calls only after such a registration.
  for (const flags of modes) {
    it(`are read once, at the set's first call, whatever a registration does later${flags.length ? " (no code generation)" : ""}`, async () => {
      const out = await outcome(
        [
          arrays,
          'const S = createBackends({ name: "sc", envPrefix: "SC", discover: false });',
          'S.declare({ name: "numpy", primaryTypes: [NpArray], implementations: { sum: () => "numpy", mean: () => "numpy" } });',
          'const sum = dispatchable((x) => "reference", { name: "sum", args: ["x"], backends: S });',
          'const mean = dispatchable((x) => "reference", { name: "mean", args: ["x"], backends: S });',
          "const first = sum(new NpArray());",
          'process.env.SC_BLOCK = "numpy";',
          "const later = [sum(new NpArray()), mean(new NpArray())];",
          'S.register("numpy", "zzz", () => "z");',
          "const afterRegistration = sum(new NpArray());",
          'process.env.SC_BLOCK = "nmupy";',
          'S.register("numpy", "yyy", () => "y");',
          "const invalidLate = attempt(() => sum(new NpArray()));",
          "console.log(JSON.stringify({ first, later, afterRegistration, invalidLate }));",
        ].join("\n"),
        flags,
        { SC_BLOCK: "" },
      );
      expect(out).toEqual({ first: "numpy", later: ["numpy", "numpy"], afterRegistration: "numpy", invalidLate: "numpy" });
    });
  }

  it("a value that is not a string, given with the env option, fails each call with a code naming the variable", async () => {
    const out = await outcome(
      [
        arrays,
        'const S = createBackends({ name: "r3", envPrefix: "R3", env: { R3_BLOCK: 42 }, discover: false });',
        'S.declare({ name: "numpy", primaryTypes: [NpArray], implementations: { sum: () => "numpy" } });',
        'const sum = dispatchable((x) => "reference", { name: "sum", args: ["x"], backends: S });',
        "let error; try { sum(new NpArray()); } catch (e) { error = { code: e.code, message: e.message }; }",
        "console.log(JSON.stringify({ error }));",
      ].join("\n"),
    );
    expect(out.error).toMatchObject({ code: "ERR_DISPATCH_INVALID_OPTION" });
    expect((out.error as { message: string }).message).toContain("R3_BLOCK in the environment of r3 must be a string");
  });
});
