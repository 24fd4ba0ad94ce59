import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { MessageChannel, receiveMessageOnPort } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { Matcher } from "../../src/hooks/matcher.js";
import { createAsyncLoad, createSyncLoad, type HookReport, initialize, load, transform } from "../../src/hooks/node-hooks.js";
import { makeTree } from "../integration/fixture.js";

const plan = { backend: "numba", exportName: "numbaFuncify", registrations: [] };
const rule = { declaredIn: "p", packageName: "tensorlab", roots: [], subpath: "numba.js", backend: "numba", exportName: "t" };
const watched = "file:///app/node_modules/tensorlab/numba.js";

describe("transform", () => {
  it("instruments ES modules and CommonJS, and reports it", () => {
    const reports: HookReport[] = [];
    const out = transform("file:///a.js", { format: "module", source: "export const a = 1;\n" }, plan, (r) => reports.push(r));
    expect(String(out.source)).toContain("dispatch-hook:module:evaluated");
    const bytes = transform("file:///b.js", { format: "commonjs", source: new TextEncoder().encode("exports.a = 1;\n") }, plan, (r) =>
      reports.push(r),
    );
    expect(String(bytes.source)).toContain("module.exports");
    expect(reports).toEqual([
      { type: "instrumented", url: "file:///a.js", backend: "numba", format: "module" },
      { type: "instrumented", url: "file:///b.js", backend: "numba", format: "commonjs" },
    ]);
  });

  it("reads CommonJS source that Node handed over as null", () => {
    const dir = makeTree({ "basic.cjs": "exports.numbaFuncify = 1;\n" });
    const url = pathToFileURL(join(dir, "basic.cjs")).href;
    const out = transform(url, { format: "commonjs", source: null }, plan, () => {});
    expect(String(out.source).startsWith("exports.numbaFuncify = 1;\n")).toBe(true);
  });

  it("leaves JSON, wasm, builtins and addons untouched", () => {
    for (const format of ["json", "wasm", "builtin", "addon", undefined]) {
      const result = { format, source: "x" };
      expect(transform("file:///a", result, plan, () => {})).toBe(result);
    }
  });

  it("fails open: the module loads unchanged and the failure is reported", () => {
    const reports: HookReport[] = [];
    const result = { format: "commonjs", source: null };
    expect(transform("file:///does/not/exist.cjs", result, plan, (r) => reports.push(r))).toBe(result);
    expect(reports).toMatchObject([{ type: "failed", url: "file:///does/not/exist.cjs", backend: "numba" }]);
    expect((reports[0] as { message: string }).message).toContain("ENOENT");
  });
});

describe("load hooks", () => {
  const matcher = new Matcher([rule]);

  it("pass unwatched modules straight through (sync)", () => {
    const result = { format: "module", source: "x" };
    const context = { format: "module" };
    const seen: unknown[] = [];
    const hook = createSyncLoad(matcher, () => {});
    const next = (url: string, ctx?: object) => {
      seen.push(url, ctx);
      return result;
    };
    expect(hook("file:///other.js", context, next)).toBe(result);
    expect(seen).toEqual(["file:///other.js", context]);
    const instrumented = hook(watched, context, () => ({ format: "module", source: "export const t = 1;\n" }));
    expect(String(instrumented.source)).toContain('backend:"numba"');
  });

  it("pass unwatched modules straight through (async), and instrument watched ones", async () => {
    const hook = createAsyncLoad(matcher, () => {});
    const result = { format: "module", source: "x" };
    expect(await hook("file:///other.js", {}, async () => result)).toBe(result);
    const out = await hook(watched, {}, async () => ({ format: "module", source: "export const t = 1;\n" }));
    expect(String(out.source)).toContain("numba");
  });

  it("the hooks-thread entry reports over its port and stops when disabled", async () => {
    const passthrough = { format: "module", source: "export const t = 1;\n" };
    expect(await load(watched, {}, async () => passthrough)).toBe(passthrough);
    const { port1, port2 } = new MessageChannel();
    initialize({ rules: [rule], plugins: [], port: port2 });
    const out = await load(watched, {}, async () => ({ ...passthrough }));
    expect(String(out.source)).toContain("numba");
    expect(receiveMessageOnPort(port1)?.message).toEqual({ type: "instrumented", url: watched, backend: "numba", format: "module" });
    port1.postMessage({ type: "disable" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await load(watched, {}, async () => passthrough)).toBe(passthrough);
    port1.close();
  });
});
