import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parse } from "acorn";
import { describe, expect, it } from "vitest";
import type { ModuleInfo } from "../../src/channel.js";
import { runtimeLocation } from "../../src/hooks/hook-api.js";
import { type EpilogueInput, instrument } from "../../src/hooks/instrument.js";
import { hub } from "../../src/hub.js";
import { tablesOf, thrown } from "../helpers.js";
import { makeTree } from "../integration/fixture.js";

const module: ModuleInfo = { url: "file:///a.js", backend: "numba", exportName: "numbaFuncify", format: "commonjs" };
const input: EpilogueInput = { module, registrations: [], runtime: "/dist/bundle/runtime.cjs" };

function parses(code: string): void {
  parse(`(function (exports, require, module, __filename, __dirname) {${code}\n})`, { ecmaVersion: "latest", sourceType: "script" });
}

describe("instrument (the CommonJS epilogue)", () => {
  it("only appends: the source is an exact prefix, and it adds one line", () => {
    for (const source of ["exports.a = 1;\n", "exports.a = 1; // no newline", "", "\r\nlet x;\r\n"]) {
      const out = instrument(source, input);
      expect(out.startsWith(source)).toBe(true);
      expect(out.slice(source.length).replace(/^\n/, "").trimEnd().split("\n")).toHaveLength(1);
      parses(out);
    }
  });

  it("keeps //# sourceMappingURL (and sourceURL) last", () => {
    const source = "exports.a = 1;\n//# sourceURL=a.js\n//# sourceMappingURL=a.js.map\n\n";
    const out = instrument(source, input);
    expect(out.startsWith(source)).toBe(true);
    expect(out.trimEnd().split("\n").slice(-2)).toEqual(["//# sourceURL=a.js", "//# sourceMappingURL=a.js.map"]);
    const inline = instrument("x;\n//# sourceMappingURL=data:application/json;base64,e30=", input);
    expect(inline.trimEnd().split("\n").pop()).toBe("//# sourceMappingURL=data:application/json;base64,e30=");
  });

  it("declares an identifier that occurs nowhere in the source", () => {
    const source = "const __dh0 = 1; const __dh1 = 2;\n";
    const out = instrument(source, input);
    expect(out.slice(source.length)).toContain("const __dh2=");
    parses(out);
  });

  it("interpolates hostile values only through JSON.stringify", () => {
    const hostile = `file:///a"b'c\`d\n</script>*/\u2028\u2029ünï😀.js`;
    const out = instrument("const a = 1;\n", {
      module: { ...module, url: hostile, backend: 'nu"mba\n*/', exportName: "x'\u2028" },
      registrations: [{ plugin: 'p"\n', url: `file:///r"${"\n"}*/.js` }],
      runtime: '/r"t\n.cjs',
    });
    parses(out);
    expect(out).toContain(JSON.stringify(hostile));
    expect(out.split("\n")).toHaveLength(3);
  });

  it("announces module.exports at the end of the body, then requires the registration modules, with the exports unchanged", () => {
    const dir = makeTree({ "reg.cjs": "globalThis.__regRanAfter = globalThis.__signalled;\n" });
    const file = join(dir, "dispatch.cjs");
    const url = pathToFileURL(file).href;
    const source = "exports.numbaFuncify = { kind: 'table' };\nexports.late = 1; exports.late = 2;\n";
    const reg = pathToFileURL(join(dir, "reg.cjs")).href;
    const code = instrument(source, {
      module: { ...module, url },
      registrations: [{ plugin: "p", url: reg }],
      runtime: runtimeLocation().cjs,
    });
    const member = {
      namespace: "dispatch",
      name: "listening",
      copy: "test",
      table: () => {
        (globalThis as Record<string, unknown>).__signalled = true;
      },
      miss: () => {},
      wrote: () => false,
      events: () => [],
    };
    hub().listen(member, "numba");
    try {
      const exports: Record<string, unknown> = {};
      const require = createRequire(file);
      new Function("exports", "require", "module", code)(exports, require, { exports });
      expect(exports).toEqual({ numbaFuncify: { kind: "table" }, late: 2 });
      // The registration module ran after the signal: the table was there for it.
      expect((globalThis as Record<string, unknown>).__regRanAfter).toBe(true);
      const signalled = tablesOf("numba").filter((n) => n.module === url);
      expect(signalled).toMatchObject([{ via: "hook", backend: "numba", exportName: "numbaFuncify", exports }]);
    } finally {
      hub().leave(member);
      delete (globalThis as Record<string, unknown>).__signalled;
      delete (globalThis as Record<string, unknown>).__regRanAfter;
    }
  });

  it("requires the registration modules once the module has loaded, when its loader first reads module.exports, and puts the plain property back", () => {
    const dir = makeTree({ "reg.cjs": "globalThis.__regRuns = (globalThis.__regRuns ?? 0) + 1;\n" });
    const file = join(dir, "dispatch.cjs");
    const code = instrument("module.exports = { table: 1 };\n", {
      module: { ...module, url: pathToFileURL(file).href },
      registrations: [{ plugin: "p", url: pathToFileURL(join(dir, "reg.cjs")).href }],
      runtime: runtimeLocation().cjs,
    });
    const state = globalThis as Record<string, unknown>;
    try {
      const mod: { exports: unknown; loaded: boolean } = { exports: {}, loaded: false };
      new Function("exports", "require", "module", code)(mod.exports, createRequire(file), mod);
      // Still loading (a require() cycle reads it now): the exports as they are, and nothing run yet.
      expect(mod.exports).toEqual({ table: 1 });
      expect(state.__regRuns).toBeUndefined();
      mod.exports = { table: 2 };
      mod.loaded = true;
      expect(mod.exports).toEqual({ table: 2 });
      expect(state.__regRuns).toBe(1);
      expect(Object.getOwnPropertyDescriptor(mod, "exports")).toMatchObject({ value: { table: 2 }, writable: true });
      expect(mod.exports).toEqual({ table: 2 });
      expect(state.__regRuns).toBe(1);
    } finally {
      delete state.__regRuns;
    }
  });

  it("refuses a non-string source with a code", () => {
    expect(thrown(() => instrument(Buffer.from("x") as unknown as string, input)).code).toBe("ERR_DISPATCH_INVALID_SOURCE");
  });
});
