// Backend sets in real processes: the exit audit (DISPATCH_HOOK_AUDIT=strict) of a registration on a
// backend the set does not declare, and a dispatchable module evaluated again, as test runners do.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { appJson, lastJson, makeTree, repoRoot, run } from "./fixture.js";

const api = JSON.stringify(join(repoRoot, "dist/index.js"));

const typo = (discover: string) => `
import { createBackends, dispatchable } from ${api};
import { Typed } from "./typed.mjs";
export const set = createBackends({ name: "ml-ops", discover: ${discover} });
${discover === "false" ? 'set.declare({ name: "typed", primaryTypes: [Typed] });' : ""}
const pool = dispatchable((x) => "reference pool", { name: "pool", args: ["x"], backends: set });
set.register(process.env.BACKEND, pool, () => "typed pool");
console.log(JSON.stringify({ ran: pool(new Typed()) }));
`;

describe("the exit audit of a backend set (real process)", () => {
  for (const [how, discover] of [
    ["in code", "false"],
    ["in package.json", "true"],
  ] as const) {
    it(`a registration on a misspelt backend fails a strict audit, naming the backend declared ${how}`, async () => {
      const dir = makeTree({
        "package.json": appJson({ dependencies: { "typed-backend": "*" } }),
        "node_modules/typed-backend/package.json": JSON.stringify({
          name: "typed-backend",
          dispatchHook: { dispatchables: { "ml-ops": { typed: { primaryTypes: ["app/typed.mjs#Typed"] } } } },
        }),
        "node_modules/app": { symlink: "." },
        "typed.mjs": "export class Typed {}\n",
        "main.mjs": typo(discover),
      });
      const env = { DISPATCH_HOOK_AUDIT: "strict" };
      const bad = await run(dir, ["main.mjs"], { ...env, BACKEND: "tyepd" });
      expect(lastJson(bad.stdout)).toEqual({ ran: "reference pool" });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('tyepd is not a backend of the set ml-ops, which declares typed (did you mean "typed"?)');
      const good = await run(dir, ["main.mjs"], { ...env, BACKEND: "typed" });
      expect(good.stderr).toBe("");
      expect(lastJson(good.stdout)).toEqual({ ran: "typed pool" });
      expect(good.code).toBe(0);
    });
  }
});

describe("a project that only chooses backends per call (real process)", () => {
  it("under the loader, a process that calls no dispatchable passes strict: the package.json's backend sets are declarations", async () => {
    const dir = makeTree({
      "package.json": appJson({ dependencies: { "fast-backend": "*" } }),
      "node_modules/fast-backend/package.json": JSON.stringify({
        name: "fast-backend",
        dispatchHook: { dispatchables: { "ml-ops": { fast: { primaryTypes: ["./arr.mjs#Arr"], implementations: {} } } } },
      }),
      "node_modules/fast-backend/arr.mjs": "export class Arr {}\n",
      "other.mjs": 'console.log("other ran");\n',
      // A registration into the set from code, waiting for the set's first decision: the loader serves no set.
      "registers.mjs": [
        `import { createBackends, dispatchable } from ${api};`,
        'const set = createBackends({ name: "ml-ops" });',
        'const total = dispatchable((x) => "reference total", { name: "total", args: ["x"], backends: set });',
        'set.register("fast", total, () => "fast total");',
        'console.log("registered");',
      ].join("\n"),
    });
    const result = await run(dir, ["--import", join(repoRoot, "loader.mjs"), "other.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    expect(result.stdout).toContain("other ran");
    expect(result.stderr).not.toContain("watches nothing");
    expect(result.code).toBe(0);
    const registers = await run(dir, ["--import", join(repoRoot, "loader.mjs"), "registers.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    expect(registers.stdout).toContain("registered");
    expect(registers.stderr).not.toContain("watches nothing");
  });
});

describe("a package.json backend the set leaves out (real process)", () => {
  it("an implementation keyed by a misspelt function name fails a strict audit and audit --, not only a warning", async () => {
    const dir = makeTree({
      "package.json": appJson({ dependencies: { "fast-backend": "*" } }),
      "node_modules/fast-backend/package.json": JSON.stringify({
        name: "fast-backend",
        dispatchHook: {
          dispatchables: { "ml-ops": { fast: { primaryTypes: ["./arr.mjs#Arr"], implementations: { totl: "./missing.mjs#total" } } } },
        },
      }),
      "node_modules/fast-backend/arr.mjs": "export class Arr {}\n",
      "main.mjs": [
        `import { createBackends, dispatchable } from ${api};`,
        'import { Arr } from "fast-backend/arr.mjs";',
        'const set = createBackends({ name: "ml-ops" });',
        'const total = dispatchable((x) => "reference total", { name: "total", args: ["x"], backends: set });',
        "console.log(JSON.stringify({ ran: total(new Arr()) }));",
      ].join("\n"),
    });
    const strict = await run(dir, ["main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    expect(lastJson(strict.stdout)).toEqual({ ran: "reference total" });
    expect(strict.stderr).toMatch(
      /\[declaration\] node_modules\/fast-backend\/package\.json: ml-ops has no dispatchable function named so: backend "fast" implements "totl" \(did you mean "total"\?\).* The backend is left out\./,
    );
    // One problem for the left-out backend, none for the implementations it was declared with.
    expect(strict.stderr.match(/\[(declaration|implementation)\]/g)).toEqual(["[declaration]"]);
    expect(strict.code).toBe(1);
    const audited = await run(dir, [join(repoRoot, "dist/bundle/cli.js"), "audit", "--", "main.mjs"]);
    expect(audited.stdout).toContain("[declaration]");
    expect(audited.code).toBe(1);
  });
});

// Written from a new user's port: doctor said "no problems found" over package.json backends that
// the set refuses at run time (a warning, and a strict audit's problem), and a declaration for a
// misspelt set name was never reported at all.
describe("package.json backends that no set takes (real process)", () => {
  const declared = (sets: Record<string, unknown>) => ({
    "package.json": appJson({ dependencies: { "wasm-backend": "*" } }),
    "node_modules/wasm-backend/package.json": JSON.stringify({ name: "wasm-backend", dispatchHook: { dispatchables: sets } }),
    "node_modules/wasm-backend/arr.mjs": "export class Arr {}\n",
    // CommonJS: a lazy implementation is loaded with require(), which takes no ES module before Node 20.19.
    "node_modules/wasm-backend/impl.cjs": 'exports.total = () => "wasm total";\n',
    "main.mjs": [
      `import { createBackends, dispatchable } from ${api};`,
      'import { Arr } from "wasm-backend/arr.mjs";',
      'const set = createBackends({ name: "scipy" });',
      'const total = dispatchable((x) => "reference total", { name: "total", args: ["x"], backends: set });',
      "console.log(JSON.stringify({ ran: total(new Arr()) }));",
    ].join("\n"),
  });
  const backend = { primaryTypes: ["./arr.mjs#Arr"], implementations: { total: "./impl.cjs#total" } };

  it("doctor names each declaration its set would refuse, with the run time's code; one spelt right passes", async () => {
    const dir = makeTree(
      declared({
        scipy: {
          optIn: { ...backend, requireOptIn: true },
          flag: { ...backend, requiresOptIn: "true" },
          number: { primaryTypes: ["./arr.mjs#Arr"], implementations: { total: 42 } },
          wrapper: { ...backend, wraps: { backend: "flag", convret: "./impl.cjs#total" } },
        },
      }),
    );
    const cli = join(repoRoot, "dist/bundle/cli.js");
    const found = await run(dir, [cli, "doctor", "--json"]);
    const report = JSON.parse(found.stdout) as { ok: boolean; findings: Array<{ backend: string; code: string; message: string }> };
    expect(report.findings.map((f) => `${f.backend} ${f.code}`).sort()).toEqual([
      "flag [scipy] ERR_DISPATCH_INVALID_OPTION",
      "number [scipy] ERR_DISPATCH_INVALID_IMPL",
      "optIn [scipy] ERR_DISPATCH_INVALID_OPTION",
      "wrapper [scipy] ERR_DISPATCH_BACKEND_DECLARATION",
    ]);
    expect(report.findings.find((f) => f.backend === "optIn [scipy]")?.message).toContain('did you mean "requiresOptIn"?');
    expect(found.code).toBe(1);
    const clean = await run(makeTree(declared({ scipy: { wasm: backend } })), [cli, "doctor"]);
    expect(clean.stdout).toContain("no problems found");
    expect(clean.code).toBe(0);
    // Its scratch sets are no registrations of doctor's own process: a run that runs doctor checked nothing (from a review).
    const audited = await run(makeTree(declared({ scipy: { wasm: backend } })), [cli, "audit", "--json", "--", cli, "doctor"]);
    const runAudit = JSON.parse(audited.stdout) as { ok: boolean; processes: Array<{ report?: { registrations: unknown[] } }> };
    expect(runAudit.processes.map((p) => p.report?.registrations.length)).toEqual([0]);
    expect(runAudit.ok).toBe(false);
  });

  it("a declaration for a set name a typo away from the set's fails a strict audit, naming the set; spelt right, it lands", async () => {
    const strict = { DISPATCH_HOOK_AUDIT: "strict" };
    const typo = await run(makeTree(declared({ scpiy: { wasm: backend } })), ["main.mjs"], strict);
    expect(lastJson(typo.stdout)).toEqual({ ran: "reference total" });
    expect(typo.stderr).toMatch(
      /\[declaration\] .*package\.json declares backend "wasm" for the backend set "scpiy", which no backend set of this process is \(did you mean "scipy"\?\)/,
    );
    expect(typo.code).toBe(1);
    const right = await run(makeTree(declared({ scipy: { wasm: backend } })), ["main.mjs"], strict);
    expect(lastJson(right.stdout)).toEqual({ ran: "wasm total" });
    expect(right.code).toBe(0);
    // Another set's declaration whose name is near only as short names are ("dct" is two edits from "fft"): no typo (from a review).
    const other = declared({ scipy: { wasm: backend }, dct: { wasm: backend } });
    const short = await run(
      makeTree({ ...other, "main.mjs": other["main.mjs"].replace('name: "scipy"', 'name: "fft"') }),
      ["main.mjs"],
      strict,
    );
    expect(short.stderr).not.toContain("[declaration]");
    expect(short.code).toBe(0);
  });
});

// Written from a new user's port: a misspelt backend in <PREFIX>_PRIORITIZE failed every call while
// a strict audit and audit -- said ok; a set with no backends of its own ignored the variable.
describe("an environment variable that fails every call of a set (real process)", () => {
  it("is a declaration problem of a strict audit, for a set with backends and for one without", async () => {
    const dir = makeTree({
      "main.mjs": [
        `import { createBackends, dispatchable } from ${api};`,
        "class Num {}",
        'const scipy = createBackends({ name: "scipy", discover: false });',
        'scipy.declare({ name: "numpy", primaryTypes: [Num], implementations: { f: () => "numpy" } });',
        'const f = dispatchable(function f(x) { return "default"; }, { args: ["x"], backends: scipy });',
        'const empty = createBackends({ name: "empty", envPrefix: "EMPTY", discover: false });',
        'const g = dispatchable(function g(x) { return "default"; }, { args: ["x"], backends: empty });',
        "const attempt = (run) => { try { return run(); } catch (error) { return error.code; } };",
        "console.log(JSON.stringify({ f: attempt(() => f(new Num())), g: attempt(() => g(1)) }));",
      ].join("\n"),
    });
    const strict = { DISPATCH_HOOK_AUDIT: "strict" };
    const bad = await run(dir, ["main.mjs"], { ...strict, SCIPY_PRIORITIZE: "nmupy", EMPTY_PRIORITIZE: "nonsense" });
    expect(lastJson(bad.stdout)).toEqual({ f: "ERR_DISPATCH_UNKNOWN_BACKEND", g: "ERR_DISPATCH_UNKNOWN_BACKEND" });
    expect(bad.stderr).toContain(
      '[declaration] SCIPY_PRIORITIZE="nmupy" names the backend "nmupy", which scipy does not declare (did you mean "numpy"?)',
    );
    expect(bad.stderr).toMatch(
      /\[declaration\] EMPTY_PRIORITIZE="nonsense" names the backend "nonsense", which empty does not declare.* Until then every call of empty's functions fails\./,
    );
    expect(bad.code).toBe(1);
    const audited = await run(dir, [join(repoRoot, "dist/bundle/cli.js"), "audit", "--", "main.mjs"], { SCIPY_PRIORITIZE: "nmupy" });
    expect(audited.stdout).toContain("[declaration] SCIPY_PRIORITIZE");
    expect(audited.code).toBe(1);
    const good = await run(dir, ["main.mjs"], { ...strict, SCIPY_PRIORITIZE: "numpy" });
    expect(lastJson(good.stdout)).toEqual({ f: "numpy", g: "default" });
    expect(good.code).toBe(0);
  });
});

// Written from a new user's port: a pair of <PREFIX>_SET_ORDER that contradicted the declared
// priorities through a chain (cupy>numpy>jax declared, jax>cupy given) failed every call as a cycle.
describe("an explicit order against declared priorities (real process)", () => {
  it("wins over them, directly or through a chain; only pairs of its own that contradict each other are a cycle", async () => {
    const dir = makeTree({
      "main.mjs": [
        `import { createBackends, dispatchable } from ${api};`,
        "class Shared {}",
        'const set = createBackends({ name: "ord", envPrefix: "ORD", discover: false });',
        'set.declare({ name: "numpy", primaryTypes: [Shared], implementations: { f: () => "numpy" } });',
        'set.declare({ name: "cupy", primaryTypes: [Shared], higherPriorityThan: ["numpy"], implementations: { f: () => "cupy" } });',
        'set.declare({ name: "jax", primaryTypes: [Shared], lowerPriorityThan: ["numpy"], implementations: { f: () => "jax" } });',
        'const f = dispatchable(function f(x) { return "default"; }, { args: ["x"], backends: set });',
        "try { console.log(JSON.stringify({ ran: f(new Shared()) })); } catch (error) { console.log(JSON.stringify({ code: error.code })); }",
      ].join("\n"),
    });
    const ran = async (order: string) => lastJson((await run(dir, ["main.mjs"], { ORD_SET_ORDER: order })).stdout);
    expect(await ran("")).toEqual({ ran: "cupy" });
    expect(await ran("numpy>cupy")).toEqual({ ran: "numpy" });
    // The declared pairs of the chain give way (numpy, jax, cupy): jax before cupy, as asked.
    expect(await ran("jax>cupy")).toEqual({ ran: "numpy" });
    expect(await ran("jax>numpy,jax>cupy")).toEqual({ ran: "jax" });
    expect(await ran("jax>cupy,cupy>jax")).toEqual({ code: "ERR_DISPATCH_PRIORITY_CYCLE" });
  });
});

// Written from a new user's port: a package.json backend could not take a number beside its arrays
// (no class can be given in JSON, and "Number" was "not a type name"), so add(wasmArray, 2) failed.
describe("a built-in type named in package.json (real process)", () => {
  it("is that type: a backend takes a number beside its arrays, and doctor finds nothing to say", async () => {
    const dir = makeTree({
      "package.json": appJson({ dependencies: { "wasm-backend": "*" } }),
      "node_modules/wasm-backend/package.json": JSON.stringify({
        name: "wasm-backend",
        dispatchHook: {
          dispatchables: {
            scipy: { wasm: { primaryTypes: ["./arr.mjs#Arr"], secondaryTypes: ["Number"], implementations: { add: "./impl.cjs#add" } } },
          },
        },
      }),
      "node_modules/wasm-backend/arr.mjs": "export class Arr {}\n",
      "node_modules/wasm-backend/impl.cjs": 'exports.add = () => "wasm add";\n',
      "main.mjs": [
        `import { createBackends, dispatchable } from ${api};`,
        'import { Arr } from "wasm-backend/arr.mjs";',
        'const set = createBackends({ name: "scipy" });',
        'const add = dispatchable((x, y) => "reference add", { name: "add", args: ["x", "y"], backends: set });',
        "console.log(JSON.stringify({ withNumber: add(new Arr(), 2), numbers: add(1, 2) }));",
      ].join("\n"),
    });
    const result = await run(dir, ["main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    expect(lastJson(result.stdout)).toEqual({ withNumber: "wasm add", numbers: "reference add" });
    expect(result.code).toBe(0);
    const doctor = await run(dir, [join(repoRoot, "dist/bundle/cli.js"), "doctor"]);
    expect(doctor.stdout).toContain("no problems found");
    expect(doctor.code).toBe(0);
  });
});

describe("a backend declared in code with an implementation keyed by a misspelt function name (real process)", () => {
  it("fails a strict audit as a declaration problem, as in a package.json; spelt right, it passes", async () => {
    const dir = makeTree({
      "main.mjs": [
        `import { createBackends, dispatchable } from ${api};`,
        'const set = createBackends({ name: "ml-ops", discover: false });',
        'set.declare({ name: "fast", primaryTypes: [Map], implementations: { [process.env.NAME]: () => "fast total" } });',
        'const total = dispatchable((x) => "reference total", { name: "total", args: ["x"], backends: set });',
        "let ran;",
        "try { ran = total(new Map()); } catch (error) { ran = error.code; }",
        "console.log(JSON.stringify({ ran }));",
      ].join("\n"),
    });
    const env = { DISPATCH_HOOK_AUDIT: "strict" };
    const bad = await run(dir, ["main.mjs"], { ...env, NAME: "totl" });
    expect(lastJson(bad.stdout)).toEqual({ ran: "ERR_DISPATCH_UNKNOWN_FUNCTION" });
    expect(bad.stderr).toMatch(
      /\[declaration\] ml-ops has no dispatchable function named so: backend "fast" implements "totl" \(did you mean "total"\?\)/,
    );
    expect(bad.code).toBe(1);
    const good = await run(dir, ["main.mjs"], { ...env, NAME: "total" });
    expect(good.stderr).toBe("");
    expect(lastJson(good.stdout)).toEqual({ ran: "fast total" });
    expect(good.code).toBe(0);
  });
});

describe("a misspelt priority in code (real process)", () => {
  it("fails a strict audit as a declaration problem naming the nearest backend; spelt right, it passes", async () => {
    const dir = makeTree({
      "main.mjs": [
        `import { createBackends, dispatchable } from ${api};`,
        'const set = createBackends({ name: "ml-ops", discover: false });',
        'set.declare({ name: "numpy", primaryTypes: [Map], implementations: { total: () => "numpy" } });',
        'set.declare({ name: "fast", primaryTypes: [Map], higherPriorityThan: [process.env.NAME], implementations: { total: () => "fast" } });',
        'const total = dispatchable((x) => "reference total", { name: "total", args: ["x"], backends: set });',
        "console.log(JSON.stringify({ ran: total(new Map()) }));",
      ].join("\n"),
    });
    const env = { DISPATCH_HOOK_AUDIT: "strict" };
    const bad = await run(dir, ["main.mjs"], { ...env, NAME: "nmupy" });
    expect(lastJson(bad.stdout)).toEqual({ ran: "numpy" });
    expect(bad.stderr).toContain("[ERR_DISPATCH_BACKEND_DECLARATION] Warning");
    expect(bad.stderr).toMatch(
      /\[declaration\] Backend "fast" of ml-ops names "nmupy" in higherPriorityThan, .*\(did you mean "numpy"\?\)/,
    );
    expect(bad.code).toBe(1);
    const good = await run(dir, ["main.mjs"], { ...env, NAME: "numpy" });
    expect(good.stderr).toBe("");
    expect(lastJson(good.stdout)).toEqual({ ran: "fast" });
    expect(good.code).toBe(0);
  });
});

describe("a lazy implementation whose module does not resolve (real process)", () => {
  it("is a problem of a strict audit before any call, in package.json and in code; with no audit running, nothing is checked", async () => {
    const dir = makeTree({
      "package.json": appJson({ dependencies: { "fast-backend": "*" } }),
      "node_modules/fast-backend/package.json": JSON.stringify({
        name: "fast-backend",
        dispatchHook: {
          dispatchables: { "ml-ops": { fast: { primaryTypes: ["./arr.mjs#Arr"], implementations: { total: "./totl.cjs#total" } } } },
        },
      }),
      "node_modules/fast-backend/arr.mjs": "export class Arr {}\n",
      "main.mjs": [
        `import { createBackends, dispatchable } from ${api};`,
        'const set = createBackends({ name: "ml-ops" });',
        'const total = dispatchable((x) => "reference total", { name: "total", args: ["x"], backends: set });',
        'const mean = dispatchable((x) => "reference mean", { name: "mean", args: ["x"], backends: set });',
        'set.register("fast", mean, "./means.cjs#mean");',
        // A number: no backend takes it, so neither implementation is ever called.
        "console.log(JSON.stringify({ ran: total(1) }));",
      ].join("\n"),
    });
    const strict = await run(dir, ["main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    expect(lastJson(strict.stdout)).toEqual({ ran: "reference total" });
    expect(strict.stderr).toMatch(
      /\[implementation\] Backend "fast" names "\.\/totl\.cjs#total" as its implementation of total, but "\.\/totl\.cjs" does not resolve from \S+fast-backend\./,
    );
    expect(strict.stderr).toMatch(
      /\[implementation\] Backend "fast" names "\.\/means\.cjs#mean" as its implementation of mean, but "\.\/means\.cjs" does not resolve/,
    );
    expect(strict.code).toBe(1);
    const plain = await run(dir, ["main.mjs"]);
    expect(plain.stderr).toBe("");
    expect(plain.code).toBe(0);
  });
});

describe("a dispatchable defined again (real process)", () => {
  it("the same module evaluated again shares the function's implementations; another function of the same name is refused", async () => {
    const dir = makeTree({
      "set.mjs": `
import { createBackends } from ${api};
export class Typed {}
export const set = createBackends({ name: "again", discover: false });
set.declare({ name: "typed", primaryTypes: [Typed], implementations: { pool: () => "typed pool" } });
`,
      "pool.mjs": `
import { dispatchable } from ${api};
import { set } from "./set.mjs";
export const pool = dispatchable(function pool(x, size) { return "reference pool"; }, { args: ["x"], backends: set });
`,
      "other.mjs": `
import { dispatchable } from ${api};
import { set } from "./set.mjs";
export const pool = dispatchable((x) => "another pool", { name: "pool", args: [0], backends: set });
`,
      "main.mjs": `
import { Typed } from "./set.mjs";
const a = await import("./pool.mjs?v=1");
const b = await import("./pool.mjs?v=2");
let other;
try { await import("./other.mjs"); other = "accepted"; } catch (error) { other = error.code + ": " + error.message; }
console.log(JSON.stringify({ a: a.pool(new Typed()), b: b.pool(new Typed()), twoModules: a.pool !== b.pool, other }));
`,
    });
    const result = await run(dir, ["main.mjs"]);
    expect(result.stderr).toBe("");
    const out = lastJson(result.stdout);
    expect(out).toMatchObject({ a: "typed pool", b: "typed pool", twoModules: true });
    expect(out.other).toMatch(/^ERR_DISPATCH_CONFLICT: .*"pool"/);
  });
});
