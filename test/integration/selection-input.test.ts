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
  'const attempt = (f) => { try { return f(); } catch (e) { return e.code ?? "raw " + e.constructor.name + ": " + e.message; } };',
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
          // By its index, the same (a review found [1] decided on the second argument alone).
          'const byIndex = dispatchable((axis, ...arrays) => "reference", { name: "stackAt", args: [1], backends: S });',
          "console.log(JSON.stringify({",
          "  mixed: attempt(() => stack(0, new NpArray(), new CpArray())),",
          "  cupy: attempt(() => stack(0, new CpArray(), new CpArray())),",
          "  number: attempt(() => stack(0, 1, new CpArray())),",
          "  numpy: attempt(() => stack(0, new NpArray(), new NpArray())),",
          "  none: attempt(() => stack(0)),",
          "  indexMixed: attempt(() => byIndex(0, new NpArray(), new CpArray())),",
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
        indexMixed: "ERR_DISPATCH_MIXED_INPUTS",
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

  // A SET_ORDER whose pairs contradict each other was kept once read, so every call failed even after it was corrected.
  it("a value that fails every call is read again until one is taken: a contradicting order, corrected", async () => {
    const out = await outcome(
      [
        arrays,
        'const env = { SO_SET_ORDER: "numpy>cupy,cupy>numpy" };',
        'const S = createBackends({ name: "so", envPrefix: "SO", env, discover: false });',
        'S.declare({ name: "numpy", primaryTypes: [NpArray], implementations: { sum: () => "numpy" } });',
        'S.declare({ name: "cupy", primaryTypes: [NpArray], implementations: { sum: () => "cupy" } });',
        'const sum = dispatchable((x) => "reference", { name: "sum", args: ["x"], backends: S });',
        "const before = attempt(() => sum(new NpArray()));",
        'env.SO_SET_ORDER = "cupy>numpy";',
        "const after = attempt(() => sum(new NpArray()));",
        "console.log(JSON.stringify({ before, after }));",
      ].join("\n"),
    );
    expect(out).toEqual({ before: "ERR_DISPATCH_PRIORITY_CYCLE", after: "cupy" });
  });

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

describe("bad input is refused where it is given, with a code, and nothing registered is lost", () => {
  // Each was accepted: a marker misspelt or of the wrong kind was ignored (the implementation got the array where it
  // expected the context), a shouldRun or an args function of the wrong kind failed the call with a raw TypeError, and a
  // backend name with "," or ">" could never be named in the variables.
  it("implementation markers, args functions, another set's function, backend names, type names and priorities", async () => {
    const out = await outcome(
      [
        arrays,
        'const S = createBackends({ name: "bad", discover: false });',
        'S.declare({ name: "numpy", primaryTypes: [NpArray], implementations: { sum: () => "numpy" } });',
        'const sum = dispatchable((x) => "reference", { name: "sum", args: ["x"], backends: S });',
        'const O = createBackends({ name: "other", discover: false });',
        'const otherSum = dispatchable((x) => "other reference", { name: "sum", args: ["x"], backends: O });',
        "const impl = (marker) => Object.assign((ctx, x) => (ctx?.backend ? 'context' : 'array'), marker);",
        "const declare = (d) => attempt(() => S.declare({ primaryTypes: [NpArray], ...d }));",
        "console.log(JSON.stringify({",
        '  usesContextNumber: declare({ name: "a", implementations: { sum: impl({ usesContext: 1 }) } }),',
        '  useContextTypo: declare({ name: "b", implementations: { sum: impl({ useContext: true }) } }),',
        '  shouldRunTrue: declare({ name: "c", implementations: { sum: impl({ shouldRun: true }) } }),',
        '  argsNotAList: attempt(() => dispatchable((n) => "reference", { name: "count", args: (n) => n, backends: S })(5)),',
        '  anotherSetsFunction: attempt(() => S.register("numpy", otherSum, () => "x", { override: true })),',
        '  comma: declare({ name: "gpu,fast", implementations: { sum: () => "g" } }),',
        '  arrow: declare({ name: "a>b", implementations: { sum: () => "g" } }),',
        '  twoHashes: declare({ name: "d", primaryTypes: ["./arrays.js#NpArray#x"] }),',
        '  bothPriorities: declare({ name: "e", higherPriorityThan: ["cupy"], lowerPriorityThan: ["cupy"] }),',
        '  ownPriority: declare({ name: "f", lowerPriorityThan: ["f"] }),',
        '  cupyAfter: attempt(() => { S.declare({ name: "cupy", primaryTypes: [CpArray], implementations: { sum: () => "cupy" } }); return "declared"; }),',
        "  stillNumpy: sum(new NpArray()),",
        "  otherStill: otherSum(new NpArray()),",
        "  backends: S.backends().map((b) => b.name),",
        "}));",
      ].join("\n"),
    );
    expect(out).toEqual({
      usesContextNumber: "ERR_DISPATCH_INVALID_IMPL",
      useContextTypo: "ERR_DISPATCH_INVALID_IMPL",
      shouldRunTrue: "ERR_DISPATCH_INVALID_IMPL",
      argsNotAList: "ERR_DISPATCH_INVALID_OPTION",
      anotherSetsFunction: "ERR_DISPATCH_INVALID_OPTION",
      comma: "ERR_DISPATCH_INVALID_BACKEND",
      arrow: "ERR_DISPATCH_INVALID_BACKEND",
      twoHashes: "ERR_DISPATCH_BACKEND_DECLARATION",
      bothPriorities: "ERR_DISPATCH_PRIORITY_CYCLE",
      ownPriority: "ERR_DISPATCH_PRIORITY_CYCLE",
      cupyAfter: "declared",
      stillNumpy: "numpy",
      otherStill: "other reference",
      backends: ["numpy", "cupy"],
    });
  });
});

describe("a lazily named implementation's markers", () => {
  // "./impl.js#sum" whose export carried a misspelt useContext ran without the context: only functions given in code were checked.
  it("are checked when it loads, eagerly or at its first call", async () => {
    const dir = makeTree({
      // CommonJS: a lazy implementation is loaded with require(), which takes no ES module on Node 20.16.
      "impl.cjs": "exports.sum = Object.assign((ctx, x) => (ctx?.backend ? 'context' : 'array'), { useContext: true });\n",
      "main.mjs": [
        `import { createBackends, dispatchable } from ${api};`,
        "class NpArray {}",
        "const attempt = (f) => { try { return f(); } catch (e) { return e.code; } };",
        'const lazy = createBackends({ name: "lz", discover: false });',
        'lazy.declare({ name: "np", base: import.meta.url, primaryTypes: [NpArray], implementations: { sum: "./impl.cjs#sum" } });',
        'const sum = dispatchable((x) => "reference", { name: "sum", args: ["x"], backends: lazy });',
        'const eager = createBackends({ name: "eg", discover: false, checkImplementations: "eager" });',
        'const declared = attempt(() => eager.declare({ name: "np", base: import.meta.url, primaryTypes: [NpArray], implementations: { sum: "./impl.cjs#sum" } }));',
        "console.log(JSON.stringify({ call: attempt(() => sum(new NpArray())), declared }));",
      ].join("\n"),
    });
    const result = await run(dir, ["main.mjs"]);
    expect(lastJson(result.stdout)).toEqual({ call: "ERR_DISPATCH_INVALID_IMPL", declared: "ERR_DISPATCH_INVALID_IMPL" });
  });
});

describe("what a set matches and checks", () => {
  // A built-in module's class as a named type crashed the call with a raw TypeError from createRequire.
  for (const flags of modes) {
    it(`a built-in module's class named as a type ("node:buffer#Buffer")${flags.length ? " (no code generation)" : ""}`, async () => {
      const out = await outcome(
        [
          arrays,
          'const S = createBackends({ name: "nb", discover: false });',
          'S.declare({ name: "bytes", primaryTypes: ["node:buffer#Buffer"], implementations: { size: () => "bytes" } });',
          'const size = dispatchable((x) => "reference", { name: "size", args: ["x"], backends: S });',
          'console.log(JSON.stringify({ buffer: attempt(() => size(Buffer.from("a"))), bytes: attempt(() => size(new Uint8Array(1))) }));',
        ].join("\n"),
        flags,
      );
      expect(out).toEqual({ buffer: "bytes", bytes: "reference" });
    });
  }

  // A normalize that gave null or undefined was ignored: the raw result was compared, a false disagreement.
  it("referenceCheck compares what normalize returns, null and undefined included", async () => {
    const out = await outcome(
      [
        arrays,
        "class Gpu { constructor(v) { this.v = v; } }",
        "class Box { constructor(v) { this.v = v; } }",
        'const S = createBackends({ name: "rn", discover: false });',
        'S.declare({ name: "gpu", primaryTypes: [Gpu], implementations: { first: (x) => new Box(x.v[0] ?? null) } });',
        'const first = dispatchable((x) => x.v[0] ?? null, { name: "first", args: ["x"], backends: S });',
        "const report = api.referenceCheck(first, { inputs: [[new Gpu([7])], [new Gpu([])]], normalize: (backend, box) => box.v });",
        "console.log(JSON.stringify({ checked: report.checked, disagreements: report.disagreements }));",
      ].join("\n"),
    );
    expect(out).toEqual({ checked: 2, disagreements: [] });
  });

  // A class declared secondary stands before a primary protocol: the trace said only "none … primary".
  it("the trace says which arguments were secondary, as the most specific matching type says", async () => {
    const out = await outcome(
      [
        arrays,
        "const ArrayAPI = { [Symbol.hasInstance]: (v) => v?.api === true };",
        'const S = createBackends({ name: "ps", discover: false });',
        'S.declare({ name: "arrayapi", primaryTypes: [ArrayAPI], secondaryTypes: [NpArray], implementations: { sum: () => "arrayapi" } });',
        'S.declare({ name: "numpy", primaryTypes: [NpArray], implementations: { sum: () => "numpy" } });',
        'const sum = dispatchable((x) => "reference", { name: "sum", args: ["x"], backends: S });',
        "const v = Object.assign(new NpArray(), { api: true });",
        "const trace = [];",
        "const ran = backendOptions({ trace }, () => sum(v));",
        'console.log(JSON.stringify({ ran, reason: trace[0].skipped.find((s) => s.backend === "arrayapi")?.reason }));',
      ].join("\n"),
    );
    expect(out).toEqual({ ran: "numpy", reason: "none of the arguments is one of its primary types (NpArray: secondary)" });
  });
});

describe("backend names of another set, declared in package.json", () => {
  // backendOptions({ disable: ["wasm"] }) around a call of another set failed with ERR_DISPATCH_UNKNOWN_BACKEND while the set
  // that gets wasm from a package.json had not decided a call yet, and passed once it had.
  it("are known to a scope whichever set was called first", async () => {
    const dir = makeTree({
      "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { "sp-wasm": "*" } }),
      "node_modules/sp-wasm/package.json": JSON.stringify({
        name: "sp-wasm",
        dispatchHook: { dispatchables: { scipy: { wasm: { primaryTypes: [], implementations: {} } } } },
      }),
      "main.mjs": [
        `import { createBackends, dispatchable, backendOptions } from ${api};`,
        'const scipy = createBackends({ name: "scipy" });',
        'const other = createBackends({ name: "other", discover: false });',
        'const f = dispatchable((x) => "reference", { name: "f", args: ["x"], backends: other });',
        'const g = dispatchable((x) => "scipy reference", { name: "g", args: ["x"], backends: scipy });',
        'let first; try { first = backendOptions({ disable: ["wasm"] }, () => f(1)); } catch (e) { first = e.code; }',
        "g(1);",
        'const second = backendOptions({ disable: ["wasm"] }, () => f(1));',
        "console.log(JSON.stringify({ first, second }));",
      ].join("\n"),
    });
    const result = await run(dir, ["main.mjs"]);
    expect(lastJson(result.stdout)).toEqual({ first: "reference", second: "reference" });
  });

  // "../impls/np.cjs#sum" in a package's dispatchables loaded from outside the package, and doctor said nothing, where
  // "../x.js" as a dispatch module is ERR_DISPATCH_CONFIG_PATH.
  it("a module outside the package is a config problem, and the backend is left out", async () => {
    const dir = makeTree({
      "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { kit: "*" } }),
      "node_modules/impls/np.cjs": "exports.sum = () => 'outside';\n",
      "node_modules/kit/package.json": JSON.stringify({
        name: "kit",
        dispatchHook: { dispatchables: { sc: { np: { primaryTypes: ["Number"], implementations: { sum: "../impls/np.cjs#sum" } } } } },
      }),
      "main.mjs": [
        `import { createBackends, dispatchable } from ${api};`,
        'const S = createBackends({ name: "sc" });',
        'const sum = dispatchable((x) => "reference", { name: "sum", args: ["x"], backends: S });',
        "console.log(JSON.stringify({ sum: sum(1), backends: S.backends().map((b) => b.name) }));",
      ].join("\n"),
    });
    const result = await run(dir, ["main.mjs"]);
    expect(lastJson(result.stdout)).toEqual({ sum: "reference", backends: [] });
    const doctor = await run(dir, [join(repoRoot, "dist/bundle/cli.js"), "doctor"]);
    expect(doctor.stdout).toContain("whose module leaves the package");
    expect(doctor.code).toBe(1);
    // An absolute path, or a backend name no variable could name, likewise (a review found both passed doctor).
    const other = makeTree({
      "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { kit: "*" } }),
      "node_modules/kit/package.json": JSON.stringify({
        name: "kit",
        dispatchHook: {
          dispatchables: {
            sc: { np: { implementations: { sum: `${join(dir, "node_modules/impls/np.cjs")}#sum` } }, "a,b": { implementations: {} } },
          },
        },
      }),
    });
    const both = await run(other, [join(repoRoot, "dist/bundle/cli.js"), "doctor"]);
    expect(both.stdout).toContain("leaves the package");
    expect(both.stdout).toContain('cannot have "," or ">" in its name');
    expect(both.code).toBe(1);
  });
});
