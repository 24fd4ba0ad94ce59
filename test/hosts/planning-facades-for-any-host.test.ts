import { rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { createAdapterCore, type HostIds } from "../../src/adapters/adapter-core.js";
import { frameworkTree } from "./trees.js";

const ids = (file: string): HostIds => ({
  original: `${file}?original`,
  runtime: "/runtime.js",
  marker: (kind, index) => `virtual:${kind}:${index ?? 0}`,
});

describe("the adapters' shared core", () => {
  it("plans a watched dispatch module from the package.json declarations, and nothing else", () => {
    const { root, table, registration } = frameworkTree();
    const core = createAdapterCore({ root }, "test host");
    const plan = core.plan(table);
    expect(plan?.backend).toBe("cpu");
    expect(plan?.exportName).toBe("cpuTable");
    expect(plan?.registrations.map((r) => [r.plugin, r.url])).toEqual([["kit-ops", `file://${registration}`]]);
    expect(core.plan(join(root, "node_modules/tensorkit/other.js"))).toBeUndefined();
    expect(core.plan("relative/path.js")).toBeUndefined();
  });

  it("reads the DISPATCH_HOOK_CONFIG file, as the loader does", () => {
    const { root } = frameworkTree({ "dh.json": JSON.stringify({ expects: { cpu: ["Pool"] } }) });
    const before = process.env.DISPATCH_HOOK_CONFIG;
    process.env.DISPATCH_HOOK_CONFIG = join(root, "dh.json");
    try {
      const core = createAdapterCore({ root }, "test host");
      expect(core.config().plugins.find((p) => p.name === join(root, "dh.json"))?.expects).toEqual({ cpu: ["Pool"] });
    } finally {
      if (before === undefined) delete process.env.DISPATCH_HOOK_CONFIG;
      else process.env.DISPATCH_HOOK_CONFIG = before;
    }
  });

  it("warns of a config problem once, with its code, as the loader does", () => {
    const { root, table } = frameworkTree({
      "package.json": JSON.stringify({ name: "app", dispatchHook: { expect: { cpu: ["Conv"] } } }),
    });
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    try {
      const core = createAdapterCore({ root }, "test host");
      core.plan(table);
      core.plan(table);
      const calls = warn.mock.calls.filter((c) => String(c[0]).includes('"expect"'));
      expect(calls).toHaveLength(1);
      expect(calls[0]?.[1]).toEqual({ code: "ERR_DISPATCH_CONFIG_INVALID" });
    } finally {
      warn.mockRestore();
    }
  });

  it("plans code files only: a JSON file a pattern matches is left to the host", () => {
    const { root } = frameworkTree({
      "package.json": JSON.stringify({
        name: "app",
        dispatchHook: {
          backends: {
            cpu: { module: "./data/cpu.mjs", export: "default" },
            gpu: { module: "./data/gpu.json", export: "default" },
            tpu: { module: "./data/tpu.node", export: "default" },
          },
        },
      }),
    });
    const core = createAdapterCore({ root }, "test host");
    expect(core.plan(join(root, "data/cpu.mjs"))?.backend).toBe("cpu");
    for (const file of ["data/gpu.json", "data/tpu.node"]) expect(core.plan(join(root, file))).toBeUndefined();
  });

  it("writes a facade that re-exports the original under the host's id, imports each step, and carries the host's facts", () => {
    const { root, table } = frameworkTree();
    const core = createAdapterCore({ root }, "test host");
    const code = core.facade(table, "export const cpuTable = new Map();\nexport default cpuTable;\n", "module", ids(table));
    expect(code).toContain(`export * from ${JSON.stringify(`${table}?original`)}`);
    expect(code).toContain(`export { default } from ${JSON.stringify(`${table}?original`)}`);
    expect(code).toContain('"virtual:step:0"');
    const step = core.marker(table, "module", "step", 0, ids(table));
    expect(step).toContain("step(");
    expect(core.marker(table, "module", "done", 0, ids(table))).toContain("finish(");
    // What the adapter knew travels with the table: its name, and the backend's plugins with their expectations.
    expect(step).toContain('"host":{"name":"test host","plugins":[{"name":"kit-ops"');
    expect(step).toContain('"expects":{"cpu":["Conv"]}');
  });

  it("does not add a default export the original lacks", () => {
    const { root, table } = frameworkTree();
    const core = createAdapterCore({ root }, "test host");
    const code = core.facade(table, "export const cpuTable = new Map();\n", "module", ids(table));
    expect(code).toContain("export * from");
    expect(code).not.toContain("export { default }");
  });

  it("takes declarations inline, with discovery off, and names them after the adapter", () => {
    const { root, table } = frameworkTree({ "mine/cpu.js": "export {};\n" });
    const core = createAdapterCore(
      {
        root,
        discover: false,
        backends: { cpu: { module: "./node_modules/tensorkit/backends/cpu/table.js", export: "cpuTable" } },
        plugins: [{ name: "mine", registrations: { cpu: "./mine/cpu.js" }, expects: { cpu: ["Mine"] } }],
      },
      "test host",
    );
    const plan = core.plan(table);
    expect(plan?.registrations.map((r) => r.plugin)).toEqual(["mine"]);
    expect(core.config().plugins.map((p) => p.declaredIn)).toEqual(["test host options for mine"]);
  });

  it("marks a registration module that does not exist, so the audit reports it instead of the build failing", () => {
    const { root, table, registration } = frameworkTree();
    const core = createAdapterCore({ root }, "test host");
    rmSync(registration);
    const step = core.marker(table, "module", "step", 0, ids(table));
    expect(step.trim()).toMatch(/, 0, "Cannot find the registration module [^"]+"\);$/);
  });

  it("marks a registration path that is a directory or not a code module as the loader does: skipped and recorded, never imported", () => {
    for (const [path, why] of [
      ["./reg", "is a directory, not a module file"],
      ["./", "is a directory, not a module file"],
      ["./notes.txt", "is not a JavaScript or TypeScript module"],
      ["./package.json", "is not a JavaScript or TypeScript module"],
    ]) {
      const { root, table } = frameworkTree({
        "node_modules/kit-ops/package.json": JSON.stringify({ name: "kit-ops", dispatchHook: { registrations: { cpu: path } } }),
        "node_modules/kit-ops/notes.txt": "not code\n",
      });
      const core = createAdapterCore({ root }, "test host");
      const facade = core.facade(table, "export const cpuTable = new Map();\n", "module", ids(table));
      expect(facade, path).not.toContain("kit-ops/");
      const step = core.marker(table, "module", "step", 0, ids(table));
      expect(step, path).toContain(why);
      expect(core.cjsFacade(table, "/runtime.cjs"), path).toContain(why);
    }
  });

  it("writes a CommonJS facade that requires the original, then the registration modules", () => {
    const { root, table, registration } = frameworkTree();
    const core = createAdapterCore({ root }, "test host");
    const code = core.cjsFacade(table, "/runtime.cjs");
    expect(code).toContain(JSON.stringify(table));
    expect(code).toContain(JSON.stringify(registration));
    expect(code).toContain("requireRegistrations");
    expect(core.formatOf(table)).toBe("module");
  });

  it("refuses an unknown option with a code and a suggestion", () => {
    expect(() => createAdapterCore({ backend: {} } as never, "test host")).toThrow(
      expect.objectContaining({ code: "ERR_DISPATCH_INVALID_OPTION", message: expect.stringContaining("backends") }),
    );
  });
});
