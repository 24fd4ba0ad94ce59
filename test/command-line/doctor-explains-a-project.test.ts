import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { doctorCommand } from "../../src/cli/doctor.js";
import type { DoctorReport } from "../../src/cli/doctor-load.js";
import { appJson, makeTree, repoRoot } from "../integration/fixture.js";
import { frameworkEsm, plugin } from "../integration/trees.js";
import { memoryIo } from "./helpers.js";

describe("dispatch-hook doctor", () => {
  it("on the healthy example app: lists backends, plugins and expectations, exits 0", async () => {
    const io = memoryIo(join(repoRoot, "examples/ordering-bug"));
    expect(await doctorCommand([], io)).toBe(0);
    const out = io.stdout();
    for (const backend of ["numba", "jax", "mlx", "pytorch"])
      expect(out).toMatch(new RegExp(`${backend}\\s+\\.\\./tensorlab/link/${backend}/dispatch/basic\\.js`));
    expect(out).toContain("plugin ml-ops");
    expect(out).toContain("numba: registers from ../ml-ops/dispatch/numba.js");
    expect(out).toContain("numba: expects PoolLayer, PoolLayerGrad, Im2Col, Col2Im");
    expect(out).toContain("no problems found");
    expect(out).not.toContain("\x1b[");
  });

  it("names every kind of problem with its fix, and exits 1", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "package.json": JSON.stringify({
        name: "app",
        type: "module",
        dependencies: { tensorlab: "*", "ml-ops": "*", typo: "*", broken: "*", lonely: "*", ghost: "*" },
        dispatchHook: {
          backends: {
            mlx: { module: "./backends/mlx.js", export: "t" },
            pt: { package: "not-installed", module: "./pt.js", export: "t" },
            "*": { module: "./nowhere/{backend}/x.js", export: "t" },
          },
        },
      }),
      "node_modules/typo/package.json": JSON.stringify({ name: "typo", dispatchHook: { registation: {} } }),
      "node_modules/broken/package.json": "{",
      "node_modules/lonely/package.json": JSON.stringify({
        name: "lonely",
        dispatchHook: { registrations: { tpu: "./tpu.js" }, expects: { cuda: ["X"] } },
      }),
      "node_modules/lonely/tpu.js": "",
      "node_modules/ghost/package.json": JSON.stringify({
        name: "ghost",
        dispatchHook: { registrations: { numba: "./missing.js", jax: "../escape.js" } },
      }),
    });
    const io = memoryIo(dir);
    expect(await doctorCommand([], io)).toBe(1);
    const out = io.stdout();
    const expectations: Array<[string, string]> = [
      ['"registation" (did you mean "registrations"?)', 'Rename it to "registrations"'],
      ["package.json is not valid JSON", "Fix the JSON syntax"],
      ['"registrations.jax" "../escape.js" leaves the package', "Use a path inside the package"],
      ["the declared module", 'Correct "module"'],
      ["for package not-installed, which is not installed", "Install not-installed"],
      ["the pattern nowhere/{backend}/x.js", "Check the path"],
      ["ghost: the registration module for numba", 'Correct "registrations.numba"'],
      ["lonely registers for backend tpu, but no framework or app declares a tpu backend", "Declare the backend"],
      ["lonely expects X on cuda but declares no registration module", '"registrations": { "cuda"'],
    ];
    for (const [problem, fix] of expectations) {
      expect(out).toContain(problem);
      expect(out).toContain(fix);
    }
    expect(out).toContain(`${expectations.length} problem(s):`);
    // The same findings as JSON, each with its stable code.
    const json = memoryIo(dir);
    expect(await doctorCommand(["--json"], json)).toBe(1);
    const report = JSON.parse(json.stdout()) as DoctorReport;
    expect(report.findings.map((f) => f.code)).toEqual([
      "ERR_DISPATCH_CONFIG_INVALID",
      "ERR_DISPATCH_CONFIG_JSON",
      "ERR_DISPATCH_CONFIG_PATH",
      "ERR_DISPATCH_MODULE_NOT_FOUND",
      "ERR_DISPATCH_MODULE_NOT_FOUND",
      "ERR_DISPATCH_MODULE_NOT_FOUND",
      "ERR_DISPATCH_UNKNOWN_BACKEND",
      "ERR_DISPATCH_REGISTRATION_MODULE",
      "ERR_DISPATCH_REGISTRATION_MODULE",
    ]);
    expect(out).toContain("code: ERR_DISPATCH_UNKNOWN_BACKEND");
  });

  it("a plugin's registrations key a typo away from a declared backend names the backend it meant", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/typo-ops/package.json": JSON.stringify({ name: "typo-ops", dispatchHook: { registrations: { nmba: "./numba.js" } } }),
      "node_modules/typo-ops/numba.js": "",
      "node_modules/tensorlab/package.json": JSON.stringify({
        name: "tensorlab",
        type: "module",
        dispatchHook: { backends: { numba: { module: "./link/numba/dispatch/basic.js", export: "numbaFuncify" } } },
      }),
      "package.json": appJson({ dependencies: { tensorlab: "*", "typo-ops": "*" } }),
    });
    const io = memoryIo(dir);
    expect(await doctorCommand([], io)).toBe(1);
    expect(io.stdout()).toContain(
      'typo-ops registers for backend nmba, but no framework or app declares a nmba backend, so its registration module never loads (did you mean "numba"?)',
    );
  });

  it("a dependency of the app that is not installed is a finding: whatever it declares is never read (it said no problems found)", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "package.json": appJson({ dependencies: { tensorlab: "*", "ml-ops": "*", "ghost-ops": "*" }, devDependencies: { "not-here": "*" } }),
    });
    const io = memoryIo(dir);
    expect(await doctorCommand([], io)).toBe(1);
    expect(io.stdout()).toContain("the app's dependency ghost-ops is not installed where the app can see it");
    // devDependencies may be left out of an install on purpose.
    expect(io.stdout()).not.toContain("not-here");
    expect(io.stdout()).toContain("1 problem(s):");
  });

  it("a registration path that is a directory or not a code module is a config problem, as a missing one is", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      "package.json": JSON.stringify({ name: "app", type: "module", dependencies: { tensorlab: "*", "odd-ops": "*" } }),
      "node_modules/odd-ops/package.json": JSON.stringify({
        name: "odd-ops",
        dispatchHook: { registrations: { numba: "./lib", jax: "./readme.txt" } },
      }),
      "node_modules/odd-ops/lib/index.js": "",
      "node_modules/odd-ops/readme.txt": "",
    });
    const io = memoryIo(dir);
    expect(await doctorCommand([], io)).toBe(1);
    const out = io.stdout();
    expect(out).toMatch(/odd-ops: the registration module for numba, \S+\/lib, is a directory, not a module file/);
    expect(out).toMatch(/odd-ops: the registration module for jax, \S+\/readme\.txt, is not a JavaScript or TypeScript module \("\.txt"\)/);
    expect(out).toContain('Correct "registrations.numba"');
    expect(out).toContain("numba: registers from node_modules/odd-ops/lib (not a module)");
    expect(out).toContain("2 problem(s):");
  });

  it("uses colour on a TTY unless NO_COLOR is set, and has --help", async () => {
    const dir = makeTree({ "package.json": "{}" });
    const tty = memoryIo(dir, { isTTY: true });
    await doctorCommand([], tty);
    expect(tty.stdout()).toContain("\x1b[1mdispatch-hook doctor\x1b[22m");
    const noColor = memoryIo(dir, { isTTY: true, env: { NO_COLOR: "1" } });
    await doctorCommand([], noColor);
    expect(noColor.stdout()).not.toContain("\x1b[");
    expect(noColor.stdout()).toContain("(none declared)");
    const help = memoryIo(dir);
    expect(await doctorCommand(["--help"], help)).toBe(0);
    expect(help.stdout()).toContain("Usage: dispatch-hook doctor");
    const bad = memoryIo(dir);
    expect(await doctorCommand(["--fix"], bad)).toBe(2);
    expect(bad.stderr()).toContain("--fix");
    expect(bad.stderr()).toContain("Usage: dispatch-hook doctor");
  });

  it("exits 1 when it finds no configuration at all, and lists the files it read", async () => {
    const dir = makeTree({
      "package.json": JSON.stringify({ name: "bare", dependencies: { lib: "1" } }),
      "node_modules/lib/package.json": "{}",
    });
    const io = memoryIo(dir);
    expect(await doctorCommand([], io)).toBe(1);
    expect(io.stdout()).toContain("no backend declaration was found");
    expect(io.stdout()).toContain("code: ERR_DISPATCH_NO_BACKENDS");
    expect(io.stdout()).toContain("read 2 file(s):");
    expect(io.stdout()).toContain("node_modules/lib/package.json");
    expect(io.stdout()).not.toContain("no problems found");
  });

  it("a project that only chooses backends per call needs no backend declaration, and its sets' backends are listed", async () => {
    const dir = makeTree({
      "package.json": JSON.stringify({ name: "app", dependencies: { "wasm-arrays": "1" } }),
      "node_modules/wasm-arrays/package.json": JSON.stringify({
        name: "wasm-arrays",
        dispatchHook: { dispatchables: { "ml-ops": { wasm: { primaryTypes: [], implementations: {} } } } },
      }),
    });
    const io = memoryIo(dir);
    expect(await doctorCommand([], io)).toBe(0);
    expect(io.stdout()).not.toContain("no backend declaration was found");
    expect(io.stdout()).toContain("ml-ops: wasm (node_modules/wasm-arrays/package.json)");
    expect(io.stdout()).toContain("no problems found");
  });

  it("a backend set's named type whose module does not resolve is a finding with a code: at run time the backend would never match", async () => {
    const dir = makeTree({
      "package.json": JSON.stringify({ name: "app", dependencies: { "ml-wasm": "1" } }),
      "node_modules/ml-wasm/package.json": JSON.stringify({
        name: "ml-wasm",
        type: "module",
        dispatchHook: {
          dispatchables: {
            "ml-ops": {
              wasm: {
                primaryTypes: ["./wasm-tensr.js#WasmTensor", "=./wasm-tensor.js#WasmTensor"],
                secondaryTypes: ["not-installed#Scalar", "@./abstract.cjs#Like"],
                implementations: {},
              },
            },
          },
        },
      }),
      "node_modules/ml-wasm/wasm-tensor.js": "export class WasmTensor {}\n",
    });
    const io = memoryIo(dir, { env: { NO_COLOR: "1" } });
    expect(await doctorCommand(["--json"], io)).toBe(1);
    const report = JSON.parse(io.stdout()) as DoctorReport;
    const types = report.findings.filter((f) => f.kind === "type");
    expect(types.map((f) => [f.backend, f.code])).toEqual([
      ["wasm [ml-ops]", "ERR_DISPATCH_TYPE_NOT_FOUND"],
      ["wasm [ml-ops]", "ERR_DISPATCH_TYPE_NOT_FOUND"],
      ["wasm [ml-ops]", "ERR_DISPATCH_TYPE_LOAD"],
    ]);
    const text = types.map((f) => `${f.message} ${f.fix}`).join("\n");
    expect(text).toMatch(/the type "\.\/wasm-tensr\.js#WasmTensor" in primaryTypes names \S+\/wasm-tensr\.js, which does not exist/);
    expect(text).toContain('the type "not-installed#Scalar" in secondaryTypes names not-installed, which does not resolve');
    expect(text).toContain('the type "@./abstract.cjs#Like" in secondaryTypes');
    expect(text).toContain('Correct "dispatchables.ml-ops.wasm.primaryTypes"');
    expect(text).not.toContain('"=./wasm-tensor.js#WasmTensor"');
  });

  it("finds a plugin that is not a direct dependency (app → toolkit → framework + plugin), from another directory", async () => {
    const dir = makeTree({
      ...frameworkEsm,
      ...plugin("tensorlab", true),
      "package.json": appJson({ dependencies: { toolkit: "*" } }),
      "node_modules/toolkit/package.json": JSON.stringify({ name: "toolkit", dependencies: { tensorlab: "*", "ml-ops": "*" } }),
      "elsewhere/.keep": "",
    });
    const io = memoryIo(join(dir, "elsewhere"));
    expect(await doctorCommand([".."], io)).toBe(0);
    expect(io.stdout()).toContain("plugin ml-ops");
    expect(io.stdout()).toContain("numba: registers from ../node_modules/ml-ops/dispatch/numba.js");
  });
});
