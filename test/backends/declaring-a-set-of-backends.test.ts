import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { dispatchable } from "../../src/dispatchable/dispatchable.js";
import { threadAudit } from "../../src/registry/thread-audit.js";
import { appJson, makeTree } from "../integration/fixture.js";

class Arr {}

describe("a set of backends", () => {
  it("is built on a registry: implementations are registrations, handles undo them, and the audit lists them", () => {
    const set = createBackends({ name: "bs-registry", discover: false });
    const mean = dispatchable((x: unknown) => `reference ${String(x)}`, { name: "mean", args: [0], backends: set });
    // Registered before its backend is declared: it waits, as any registration does.
    const handle = set.register("fast", "mean", () => "fast mean");
    expect(mean(new Arr())).toBe("reference [object Object]");
    set.declare({ name: "fast", primaryTypes: [Arr] });
    expect(mean(new Arr())).toBe("fast mean");
    expect(set.registry.verify().registrations.map((r) => `${r.op} on ${r.backend}: ${r.state}`)).toEqual(["mean on fast: applied"]);
    handle.dispose();
    expect(mean(new Arr())).toBe("reference [object Object]");
    // A second implementation of the same function on the same backend is refused unless it overrides.
    set.register("fast", mean, () => "one");
    expect(() => set.register("fast", mean, () => "two")).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_CONFLICT" }));
  });

  it("refuses a backend declared twice, a bad name and a bad implementation, with codes, and keeps what it had", () => {
    const set = createBackends({ name: "bs-bad", discover: false });
    set.declare({ name: "one", primaryTypes: [Arr], implementations: { f: () => 1 } });
    expect(() => set.declare({ name: "one" })).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_BACKEND_DECLARATION" }));
    expect(() => set.declare({ name: "has space" })).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_INVALID_BACKEND" }));
    expect(() => set.declare({ name: "two", implementations: { f: 3 as never } })).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_INVALID_IMPL" }),
    );
    expect(() => set.declare({ name: "three", primaryType: [Arr] } as never)).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OPTION", message: expect.stringContaining("primaryTypes") }),
    );
    // "default" is what traces, resolve() and context.remaining call the reference implementation.
    expect(() => set.declare({ name: "default", primaryTypes: [Arr] })).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_RESERVED_NAME", message: expect.stringContaining("the reference implementation") }),
    );
    expect(set.backends().map((b) => b.name)).toEqual(["one"]);
    // The prefix names environment variables: one that no shell can set would be ignored for good.
    for (const envPrefix of ["", "a b", "ML-OPS"]) {
      expect(() => createBackends({ name: "bs-prefix", envPrefix }), JSON.stringify(envPrefix)).toThrow(
        expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OPTION", message: expect.stringContaining("envPrefix") }),
      );
    }
    expect(() => createBackends({ name: "" })).toThrow(
      expect.objectContaining({
        code: "ERR_DISPATCH_INVALID_OPTION",
        message: expect.stringContaining('"name" must be a non-empty string'),
      }),
    );
    expect(() => createBackends(undefined as never)).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OPTION" }));
    // A misspelt key is named as such, not as a missing name.
    expect(() => createBackends({ nme: "calc" } as never)).toThrow(
      expect.objectContaining({
        code: "ERR_DISPATCH_INVALID_OPTION",
        message: expect.stringContaining('unknown option "nme" (did you mean "name"?)'),
      }),
    );
    // An option of declare() given here was "unknown … (did you mean "name"?)": it says where it belongs.
    expect(() => createBackends({ name: "calc", base: import.meta.url } as never)).toThrow(
      expect.objectContaining({
        code: "ERR_DISPATCH_INVALID_OPTION",
        message: expect.stringContaining('"base" is an option of each backend\'s declare()'),
      }),
    );
  });

  it("reads backends declared in package.json under its name, lazily, and warns about a broken one", () => {
    const root = makeTree({
      "package.json": appJson({ dependencies: { "fast-backend": "*" } }),
      "node_modules/fast-backend/package.json": JSON.stringify({
        name: "fast-backend",
        dispatchHook: {
          dispatchables: {
            "bs-packages": {
              fast: { primaryTypes: ["./arr.cjs#FastArr"], implementations: { total: "./total.mjs#total" }, higherPriorityThan: ["slow"] },
              broken: { primaryTypes: [42] },
            },
            "another-set": { other: { implementations: {} } },
          },
        },
      }),
      "node_modules/fast-backend/arr.cjs": "class FastArr {}\nmodule.exports = { FastArr };\n",
      // An ES module, loaded on first use through require().
      "node_modules/fast-backend/total.mjs": "globalThis.totalLoaded = true;\nexport const total = () => 'fast total';\n",
    });
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    const set = createBackends({ name: "bs-packages", discover: root });
    set.declare({ name: "slow", primaryTypes: [Arr], implementations: { total: () => "slow total" } });
    const total = dispatchable((_x: unknown) => "reference total", { name: "total", args: [0], backends: set });
    expect(total(new Arr())).toBe("slow total");
    const infos = set.backends();
    expect(infos.map((b) => [b.name, b.functions.total])).toEqual([
      ["fast", "./total.mjs#total"],
      ["slow", "total"],
    ]);
    expect((globalThis as { totalLoaded?: boolean }).totalLoaded).toBeUndefined();
    // The package's type, by name: a FastArr goes to the package's backend, whose module loads now.
    const { FastArr } = createRequire(join(root, "node_modules/fast-backend/x.js"))("./arr.cjs") as { FastArr: new () => object };
    expect(total(new FastArr())).toBe("fast total");
    expect((globalThis as { totalLoaded?: boolean }).totalLoaded).toBe(true);
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({
        message: expect.stringContaining('Backend "broken" of bs-packages: a type must be a class'),
        code: "ERR_DISPATCH_BACKEND_DECLARATION",
        details: { set: "bs-packages", backend: "broken" },
      }),
    );
    warn.mockRestore();
  });
});

describe("typos found early", () => {
  it("with eager checking, a lazy implementation whose module does not resolve or whose export is missing fails at registration, and nothing is lost", () => {
    const dir = makeTree({ "impl.cjs": "exports.add = (a, b) => a + b;\n" });
    const set = createBackends({ name: "eager", discover: false, checkImplementations: "eager" });
    set.declare({ name: "ok", primaryTypes: [Arr], implementations: { add: "./impl.cjs#add" }, base: dir });
    expect(() => set.declare({ name: "bad", primaryTypes: [Arr], implementations: { add: "./nowhere.cjs#add" }, base: dir })).toThrow(
      expect.objectContaining({
        code: "ERR_DISPATCH_IMPL_LOAD",
        message: expect.stringMatching(/Backend "bad" .*implementation of add, but "\.\/nowhere\.cjs" does not resolve/),
      }),
    );
    expect(() => set.register("ok", "sub", `${join(dir, "impl.cjs")}#sub`)).toThrow(/its export "sub" is undefined, not a function\./);
    // A misspelt export is named with the module's export it is near.
    expect(() => set.declare({ name: "typo", implementations: { add: "./impl.cjs#ad" }, base: dir })).toThrow(
      /its export "ad" is undefined, not a function \(did you mean "add"\?\)/,
    );
    expect(set.backends().map((b) => [b.name, b.functions])).toEqual([["ok", { add: "./impl.cjs#add" }]]);
    // Lazy by default: the same declaration is accepted, and fails on first use.
    createBackends({ name: "lazy", discover: false }).declare({ name: "bad", implementations: { add: "./nowhere.cjs#add" }, base: dir });
    expect(() => createBackends({ name: "x", checkImplementations: "soon" as never })).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OPTION" }),
    );
  });

  it("a lazy implementation whose module does not resolve is a problem of the set's audit before any call, for as long as it stands", () => {
    const dir = makeTree({ "impl.cjs": "exports.add = (a, b) => a + b;\n" });
    const set = createBackends({ name: "unresolved", discover: false });
    const wraps = { backend: "ok", convert: "./nowhere.cjs#convert", restore: "./impl.cjs#add" };
    set.declare({ name: "ok", primaryTypes: [Arr], implementations: { add: "./impl.cjs#add", sub: "./later.cjs#sub" }, base: dir });
    set.declare({ name: "wrapper", primaryTypes: [], wraps, base: dir });
    const handle = set.register("ok", "mul", "./nowhere.cjs#mul");
    const problems = () => set.registry.verify().problems.map((p) => [p.kind, p.backend, p.op, p.code]);
    expect(problems()).toEqual([
      ["implementation", "ok", "sub", "ERR_DISPATCH_IMPL_LOAD"],
      ["implementation", "ok", "mul", "ERR_DISPATCH_IMPL_LOAD"],
      ["implementation", "wrapper", "wraps.convert", "ERR_DISPATCH_IMPL_LOAD"],
    ]);
    expect(set.registry.verify().problems[0]?.message).toMatch(
      /Backend "ok" names "\.\/later\.cjs#sub" as its implementation of sub, but "\.\/later\.cjs" does not resolve/,
    );
    // Undone, it is no problem; a module that appears is none either.
    handle.dispose();
    writeFileSync(join(dir, "later.cjs"), "exports.sub = (a, b) => a - b;\n");
    expect(problems()).toEqual([["implementation", "wrapper", "wraps.convert", "ERR_DISPATCH_IMPL_LOAD"]]);
  });

  it("a relative base resolves from the working directory, for lazy implementations and abstract named types alike", () => {
    const dir = makeTree({
      "impl.cjs":
        "exports.add = () => 'lazy add';\nexports.Abs = class Abs { static [Symbol.hasInstance](v) { return v?.abs === true; } };\n",
    });
    const base = relative(process.cwd(), dir);
    const set = createBackends({ name: "relative", discover: false });
    set.declare({ name: "rel", primaryTypes: ["@./impl.cjs#Abs"], implementations: { add: "./impl.cjs#add" }, base });
    const add = dispatchable((_x: unknown) => "reference add", { name: "add", args: [0], backends: set });
    expect(add({ abs: true })).toBe("lazy add");
    expect(add({})).toBe("reference add");
    const eager = createBackends({ name: "relative-eager", discover: false, checkImplementations: "eager" });
    expect(() => eager.declare({ name: "bad", implementations: { add: "./nowhere.cjs#add" }, base })).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_IMPL_LOAD" }),
    );
  });

  it("a base given as a module's URL or path resolves from that module's directory, as a library declaring its backends passes it", () => {
    const dir = makeTree({
      "lib/backends.mjs": "export {};\n",
      "lib/impl.cjs": "exports.add = () => 'lazy add';\nexports.Gpu = class Gpu {};\n",
    });
    const module = join(dir, "lib/backends.mjs");
    for (const base of [pathToFileURL(module).href, module]) {
      const set = createBackends({ name: "module-base", discover: false });
      set.declare({ name: "gpu", primaryTypes: ["@./impl.cjs#Gpu"], implementations: { add: "./impl.cjs#add" }, base });
      const add = dispatchable((_x: unknown) => "reference add", { name: "add", args: [0], backends: set });
      const { Gpu } = createRequire(module)("./impl.cjs") as { Gpu: new () => object };
      expect(add(new Gpu()), base).toBe("lazy add");
      expect(add(1), base).toBe("reference add");
      expect(set.registry.verify().problems, base).toEqual([]);
    }
  });

  it("an implementation keyed by a name near one of the set's functions is an error naming it, at the first decision or at registration", () => {
    const set = createBackends({ name: "typo", discover: false });
    // Declared before the functions exist, as a framework does: checked at the first call.
    set.declare({ name: "fast", primaryTypes: [Arr], implementations: { add: () => "fast add", ad: () => "typo" } });
    const add = dispatchable((_x: unknown) => "reference add", { name: "add", args: [0], backends: set });
    const cumsum = dispatchable((_x: unknown) => "reference cumsum", { name: "cumsum", args: [0], backends: set });
    expect(() => add(new Arr())).toThrow(
      expect.objectContaining({
        code: "ERR_DISPATCH_UNKNOWN_FUNCTION",
        message: expect.stringContaining('backend "fast" implements "ad" (did you mean "add"?)'),
      }),
    );
    // The set's error, whichever of its functions decides first.
    expect(() => cumsum(new Arr())).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_UNKNOWN_FUNCTION" }));
    // Fixed by removing it; the others were never lost.
    const set2 = createBackends({ name: "typo-2", discover: false });
    set2.declare({
      name: "fast",
      primaryTypes: [Arr],
      implementations: { add: () => "fast add", later: () => "a function defined later" },
    });
    const add2 = dispatchable((_x: unknown) => "reference add", { name: "add", args: [0], backends: set2 });
    expect(add2(new Arr())).toBe("fast add");
    // After the first decision, at registration; a name near none is left alone.
    expect(() => set2.register("fast", "ad", () => 1)).toThrow(/did you mean "add"/);
    expect(() => set2.declare({ name: "other", implementations: { ad: () => 1 } })).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_UNKNOWN_FUNCTION" }),
    );
    expect(set2.backends().map((b) => b.name)).toEqual(["fast"]);
    // Names near none are functions defined later: kept, and they run once defined.
    set2.register("fast", "linspace", () => "fast linspace");
    const later = dispatchable((_x: unknown) => "reference later", { name: "later", args: [0], backends: set2 });
    const linspace = dispatchable((_x: unknown) => "reference linspace", { name: "linspace", args: [0], backends: set2 });
    expect([later(new Arr()), linspace(new Arr())]).toEqual(["a function defined later", "fast linspace"]);
    // A one-character name is near no other: g beside f is another function, not a typo of it.
    const short = createBackends({ name: "typo-short", discover: false });
    const f = dispatchable((_x: unknown) => "reference f", { name: "f", args: [0], backends: short });
    expect(f(new Arr())).toBe("reference f");
    short.declare({ name: "fast", primaryTypes: [Arr], implementations: { f: () => "fast f", g: () => "fast g" } });
    const g = dispatchable((_x: unknown) => "reference g", { name: "g", args: [0], backends: short });
    expect([f(new Arr()), g(new Arr())]).toEqual(["fast f", "fast g"]);
  });

  it("while an audit runs, the audit names the file and line that declared or registered each implementation", () => {
    const before = process.env.DISPATCH_HOOK_AUDIT;
    process.env.DISPATCH_HOOK_AUDIT = "report";
    try {
      const set = createBackends({ name: "sites", discover: false });
      set.declare({ name: "fast", primaryTypes: [Arr], implementations: { add: () => "fast add" } });
      set.register("fast", "total", () => 1);
      const sites = set.registry.verify().registrations.map((r) => r.site);
      expect(sites).toHaveLength(2);
      for (const site of sites) expect(site).toMatch(/declaring-a-set-of-backends\.test\.ts:\d+$/);
      // Declared in a package.json: its file is the site, never a file of dispatch-hook's.
      const root = makeTree({
        "package.json": appJson({ dependencies: { "site-pkg": "*" } }),
        "node_modules/site-pkg/package.json": JSON.stringify({
          name: "site-pkg",
          dispatchHook: { dispatchables: { "sites-pkg": { fast: { primaryTypes: [], implementations: { add: "./a.cjs#add" } } } } },
        }),
      });
      const fromPackage = createBackends({ name: "sites-pkg", discover: root });
      dispatchable((_x: unknown) => 0, { name: "add", args: [0], backends: fromPackage })(1);
      expect(fromPackage.registry.verify().registrations.map((r) => r.site)).toEqual([
        expect.stringMatching(/node_modules\/site-pkg\/package\.json$/),
      ]);
    } finally {
      if (before === undefined) delete process.env.DISPATCH_HOOK_AUDIT;
      else process.env.DISPATCH_HOOK_AUDIT = before;
    }
  });

  it("a declaration's error names the set, the backend and the function in its details, as well as in its message", () => {
    const set = createBackends({ name: "details", discover: false });
    set.declare({ name: "fast", implementations: {} });
    const errorOf = (declaration: object) => {
      try {
        set.declare(declaration as never);
      } catch (error) {
        return { code: (error as { code?: string }).code, details: (error as { details?: object }).details };
      }
      return undefined;
    };
    expect(errorOf({ name: "n1", primaryTypes: [42] })).toEqual({
      code: "ERR_DISPATCH_BACKEND_DECLARATION",
      details: { set: "details", backend: "n1" },
    });
    expect(errorOf({ name: "n2", primaryTypes: ["#X"] })).toEqual({
      code: "ERR_DISPATCH_BACKEND_DECLARATION",
      details: { set: "details", backend: "n2", type: "#X" },
    });
    expect(errorOf({ name: "fast" })?.details).toEqual({ set: "details", backend: "fast" });
    // An error that concerns one function names it too.
    expect(errorOf({ name: "n3", implementations: { f: 42 } })).toEqual({
      code: "ERR_DISPATCH_INVALID_IMPL",
      details: { set: "details", backend: "n3", function: "f" },
    });
    // An error that names its backend already (a registration's conflict) gets the set and the function too.
    set.register("c", "f", () => 1);
    expect(errorOf({ name: "c", implementations: { f: () => 2 } })).toEqual({
      code: "ERR_DISPATCH_CONFLICT",
      details: { set: "details", backend: "c", op: "f", function: "f" },
    });
    // The name is read before the options are checked: a refusal of another option names the backend.
    expect(errorOf({ name: "n4", implementation: { f: () => 1 } })).toEqual({
      code: "ERR_DISPATCH_INVALID_OPTION",
      details: { set: "details", backend: "n4" },
    });
    expect(errorOf({ name: 42, implementations: {} })).toEqual({ code: "ERR_DISPATCH_INVALID_OPTION", details: { set: "details" } });
  });

  it("register()'s error names the set, the backend and the function in its details, whatever refuses it", () => {
    const set = createBackends({ name: "register-details", discover: false });
    set.declare({ name: "fast", primaryTypes: [Arr], implementations: { total: () => 1 } });
    const total = dispatchable((_x: unknown) => 0, { name: "total", args: [0], backends: set });
    expect(total(new Arr())).toBe(1);
    const errorOf = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return { code: (error as { code?: string }).code, details: (error as { details?: object }).details };
      }
      return undefined;
    };
    expect(errorOf(() => set.register("fast", total, 42 as never))).toEqual({
      code: "ERR_DISPATCH_INVALID_IMPL",
      details: { set: "register-details", backend: "fast", function: "total" },
    });
    expect(errorOf(() => set.register("fast", "total", () => 2))).toEqual({
      code: "ERR_DISPATCH_CONFLICT",
      details: { set: "register-details", backend: "fast", op: "total", function: "total" },
    });
    expect(errorOf(() => set.register("fast", "totl", () => 2))).toEqual({
      code: "ERR_DISPATCH_UNKNOWN_FUNCTION",
      details: expect.objectContaining({ set: "register-details", backend: "fast", function: "totl" }),
    });
    // declare() names them the same way (its details had only `typos`).
    expect(errorOf(() => set.declare({ name: "slow", primaryTypes: [Arr], implementations: { totl: () => 3 } }))).toEqual({
      code: "ERR_DISPATCH_UNKNOWN_FUNCTION",
      details: expect.objectContaining({ set: "register-details", backend: "slow", function: "totl", near: "total" }),
    });
    expect(errorOf(() => set.register("a b", "total", () => 2))).toEqual({
      code: "ERR_DISPATCH_INVALID_BACKEND",
      details: { set: "register-details", backend: "a b" },
    });
    expect(errorOf(() => set.register("fast", {} as never, () => 2))).toEqual({
      code: "ERR_DISPATCH_INVALID_OPTION",
      details: { set: "register-details", backend: "fast" },
    });
  });

  it("a function defined after the first decision is checked too: an implementation keyed by a name near it is the error", () => {
    const set = createBackends({ name: "typo-late", discover: false });
    set.declare({ name: "fast", primaryTypes: [Arr], implementations: { add: () => "fast add", sun: () => "typo of sum" } });
    const add = dispatchable((_x: unknown) => "reference add", { name: "add", args: [0], backends: set });
    expect(add(new Arr())).toBe("fast add");
    const sum = dispatchable((_x: unknown) => "reference sum", { name: "sum", args: [0], backends: set });
    expect(() => sum(new Arr())).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_UNKNOWN_FUNCTION", message: expect.stringContaining('"sun" (did you mean "sum"?)') }),
    );
  });

  it("an implementation declared in code under a misspelt function name is a declaration problem of the audit while it stands, as in a package.json", () => {
    const set = createBackends({ name: "typo-audit", discover: false });
    set.declare({ name: "fast", primaryTypes: [Arr], implementations: { totl: () => "typo", mean: () => "fast mean" } });
    const handle = set.register("slow", "totl", () => "typo too");
    set.declare({ name: "slow", primaryTypes: [Arr] });
    set.declare({ name: "fine", primaryTypes: [Arr], implementations: { mean: () => "fine mean" } });
    const total = dispatchable((_x: unknown) => "reference total", { name: "total", args: [0], backends: set });
    dispatchable((_x: unknown) => "reference mean", { name: "mean", args: [0], backends: set });
    const problems = () => set.registry.verify().problems.map((p) => [p.kind, p.backend, p.code, p.message]);
    const says = (backend: string) => [
      "declaration",
      backend,
      "ERR_DISPATCH_UNKNOWN_FUNCTION",
      expect.stringMatching(
        new RegExp(
          `backend "${backend}" implements "totl" \\(did you mean "total"\\?\\).* Until then every call of typo-audit's functions fails\\.$`,
        ),
      ),
    ];
    // Judged before any call, against the functions defined so far (a program that never calls is audited too).
    expect(problems()).toEqual([says("fast"), says("slow")]);
    expect(set.registry.verify().ok).toBe(false);
    expect(() => total(new Arr())).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_UNKNOWN_FUNCTION" }));
    expect(problems()).toEqual([says("fast"), says("slow")]);
    // Disposed, the registration is no problem any more.
    handle.dispose();
    expect(problems()).toEqual([says("fast")]);
  });

  it("a priority naming no backend but one near a declared one is a coded warning at the first decision and a problem of the audit while it stands", () => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    try {
      const set = createBackends({ name: "priority-typo", discover: false, env: {} });
      set.declare({ name: "numpy", primaryTypes: [Arr], implementations: { f: () => "numpy" } });
      set.declare({ name: "fast", primaryTypes: [Arr], higherPriorityThan: ["nmupy"], implementations: { f: () => "fast" } });
      // A name near none of the set's backends may be one whose package is not installed: left alone.
      set.declare({ name: "slow", primaryTypes: [Arr], lowerPriorityThan: ["cupy"] });
      // Near "fast" now, but declared before the first decision: no typo.
      set.declare({ name: "typed", primaryTypes: [Arr], lowerPriorityThan: ["fast2"] });
      set.declare({ name: "fast2", primaryTypes: [Arr] });
      const problems = () => set.registry.verify().problems.map((p) => [p.kind, p.backend, p.code]);
      // Before the first decision, a name may still be declared: nothing is judged.
      expect(problems()).toEqual([]);
      const f = dispatchable((_x: unknown) => "default", { name: "f", args: [0], backends: set });
      expect(f(new Arr())).toBe("numpy");
      expect(f(new Arr())).toBe("numpy");
      const said = () =>
        warn.mock.calls.map((c) => c[0]).filter((w) => (w as { code?: string }).code === "ERR_DISPATCH_BACKEND_DECLARATION");
      expect(said()).toHaveLength(1);
      // The warning carries the facts too, as errors.md says: a "warning" listener need not parse the message.
      expect(said()[0]).toMatchObject({
        name: "Warning",
        message: expect.stringContaining(
          'Backend "fast" of priority-typo names "nmupy" in higherPriorityThan, which the set does not declare (did you mean "numpy"?)',
        ),
        details: { set: "priority-typo", backend: "fast", option: "higherPriorityThan", name: "nmupy", near: "numpy" },
      });
      expect(problems()).toEqual([["declaration", "fast", "ERR_DISPATCH_BACKEND_DECLARATION"]]);
      expect(set.registry.verify().ok).toBe(false);
      // Declared after all: the problem is gone.
      set.declare({ name: "nmupy", primaryTypes: [] });
      expect(set.backends().map((b) => b.name)).toEqual(["numpy", "fast", "slow", "fast2", "typed", "nmupy"]);
      expect(problems()).toEqual([]);
      expect(said()).toHaveLength(1);
    } finally {
      warn.mockRestore();
    }
  });

  it("a package.json backend with such a typo is left out with a coded warning", () => {
    const root = makeTree({
      "package.json": appJson({ dependencies: { typo: "*" } }),
      "node_modules/typo/package.json": JSON.stringify({
        name: "typo",
        dispatchHook: { dispatchables: { "typo-packages": { fast: { primaryTypes: [], implementations: { totl: "./t.cjs#t" } } } } },
      }),
    });
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    const set = createBackends({ name: "typo-packages", discover: root });
    const total = dispatchable((_x: unknown) => "reference", { name: "total", args: [0], backends: set });
    expect(total(new Arr())).toBe("reference");
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({
        message: expect.stringContaining('implements "totl" (did you mean "total"?)'),
        code: "ERR_DISPATCH_UNKNOWN_FUNCTION",
        details: expect.objectContaining({ set: "typo-packages" }),
      }),
    );
    warn.mockRestore();
    // Its calls go elsewhere: a problem of the set's audit, not only a warning.
    const report = set.registry.verify();
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([
      expect.objectContaining({ kind: "declaration", backend: "fast", message: expect.stringContaining("The backend is left out.") }),
    ]);
  });
});

describe("a registration on a backend the set does not declare", () => {
  it("stays allowed (it may be declared later), but is a problem of the audit while it waits, naming the nearest declared backend", () => {
    const set = createBackends({ name: "undeclared", discover: false });
    set.declare({ name: "typed", primaryTypes: [Arr] });
    const pool = dispatchable((_x: unknown) => "reference pool", { name: "pool", args: [0], backends: set });
    const typo = set.register("tyepd", pool, () => "typed pool");
    expect(pool(new Arr())).toBe("reference pool");
    const report = set.registry.verify();
    expect(report.ok).toBe(false);
    // Judged, so counted as checked.
    expect(report.checked).toBe(1);
    expect(report.problems).toEqual([
      expect.objectContaining({
        kind: "pending",
        backend: "tyepd",
        op: "pool",
        message: expect.stringContaining('tyepd is not a backend of the set undeclared, which declares typed (did you mean "typed"?)'),
      }),
    ]);
    expect(set.registry.format()).not.toContain("which never loaded");
    expect(() => set.registry.assertComplete()).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_INCOMPLETE" }));
    // The thread's audit (the exit audit's) says the same, naming the set's backend apart from a framework's.
    const thread = threadAudit().problems.filter((p) => p.op === "pool" && p.backend.startsWith("tyepd "));
    expect(thread).toEqual([expect.objectContaining({ kind: "pending", message: expect.stringContaining('(did you mean "typed"?)') })]);
    // Nothing else was lost, and fixing the name fixes the audit.
    typo.dispose();
    set.register("typed", pool, () => "typed pool");
    expect(pool(new Arr())).toBe("typed pool");
    expect(set.registry.verify().ok).toBe(true);
  });

  it("registered before its backend is declared: a problem only until the declaration comes", () => {
    const set = createBackends({ name: "declared-later", discover: false });
    const mean = dispatchable((_x: unknown) => "reference mean", { name: "mean", args: [0], backends: set });
    set.register("fast", mean, () => "fast mean");
    expect(mean(new Arr())).toBe("reference mean");
    expect(set.registry.verify().problems.map((p) => p.message)).toEqual([
      expect.stringContaining("fast is not a backend of the set declared-later, which declares none"),
    ]);
    set.declare({ name: "fast", primaryTypes: [Arr] });
    expect(mean(new Arr())).toBe("fast mean");
    expect(set.registry.verify().ok).toBe(true);
  });

  it("a set that reads package.json declarations judges only after it has read them, at its first decision", () => {
    const set = createBackends({ name: "undeclared-packages", discover: makeTree({ "package.json": appJson() }) });
    const mean = dispatchable((_x: unknown) => "reference mean", { name: "mean", args: [0], backends: set });
    set.register("wasm", mean, () => "wasm mean");
    // A package may still declare wasm: nothing is said before the set has read them.
    expect(set.registry.verify().ok).toBe(true);
    expect(mean(new Arr())).toBe("reference mean");
    expect(set.registry.verify().problems.map((p) => p.backend)).toEqual(["wasm"]);
  });
});
