import { describe, expect, it } from "vitest";
import * as api from "../../src/index.js";

describe("the public API", () => {
  it("exports a small, fixed set of values", () => {
    expect(Object.keys(api).sort()).toEqual([
      "DispatchHookError",
      "Dispatcher",
      "announce",
      "backendOptions",
      "createBackends",
      "createRegistry",
      "dispatchable",
      "errorCodes",
      "formatReport",
      "isDispatcher",
      "referenceCheck",
      "register",
      "registry",
      "threadAudit",
      "warningCodes",
    ]);
  });

  it("gives every exported name one meaning across the package's entry points", async () => {
    const { readFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const ts = (await import("typescript")).default;
    const root = join(import.meta.dirname, "../..");
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, unknown> };
    // Each entry's types, as the exports map names them, read from its source.
    const entries = Object.values(manifest.exports)
      .map((target) => (typeof target === "object" && target !== null ? (target as { types?: string }).types : undefined))
      .filter((types): types is string => types !== undefined)
      .map((types) => join(root, types.replace("./dist/types/", "src/").replace(/\.d\.ts$/, ".ts")));
    expect(entries.length).toBeGreaterThan(5);
    const program = ts.createProgram(entries, {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      noEmit: true,
    });
    const checker = program.getTypeChecker();
    const meanings = new Map<string, Set<string>>();
    for (const entry of entries) {
      const file = program.getSourceFile(entry);
      const module = file === undefined ? undefined : checker.getSymbolAtLocation(file);
      for (const exported of module === undefined ? [] : checker.getExportsOfModule(module)) {
        const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
        const where = (target.declarations ?? []).map((d) => `${d.getSourceFile().fileName}:${d.pos}`).join(",");
        if (!meanings.has(exported.name)) meanings.set(exported.name, new Set());
        meanings.get(exported.name)?.add(where);
      }
    }
    expect(meanings.size).toBeGreaterThan(50);
    // The hosts' plugin factories share a name on purpose: each entry is one host's.
    const twoMeanings = [...meanings].filter(([name, where]) => where.size > 1 && name !== "dispatchHook" && name !== "default");
    expect(twoMeanings.map(([name]) => name)).toEqual([]);
  });

  it("register() is shorthand for the default registry and records no call site while no audit runs", () => {
    class Shorthand {}
    const handle = api.register("numba", Shorthand, () => 1);
    try {
      expect(api.registry.pending("numba")).toContain(handle);
      const record = api.registry.verify().registrations.find((r) => r.id === handle.id);
      // Capturing a call site costs more than the rest of a registration: only while an audit runs
      // (test/integration checks the plugin's own line under DISPATCH_HOOK_AUDIT).
      expect(record?.site).toBe("unknown");
    } finally {
      handle.dispose();
    }
    expect(handle.state).toBe("disposed");
  });
});
