import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { dispatchable } from "../../src/dispatchable/dispatchable.js";
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
    set.register("fast", mean, () => 1);
    expect(() => set.register("fast", mean, () => 2)).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_CONFLICT" }));
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
    expect(set.backends().map((b) => b.name)).toEqual(["one"]);
    expect(() => createBackends({ name: "" })).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OPTION" }));
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
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('Backend "broken" of bs-packages: a type must be a class'), {
      code: "ERR_DISPATCH_BACKEND_DECLARATION",
    });
    warn.mockRestore();
  });
});
