import { SourceMap } from "node:module";
import { describe, expect, it, vi } from "vitest";
import { dispatchHook } from "../../src/adapters/vite.js";
import { frameworkTree } from "./trees.js";

type Hook = (...args: unknown[]) => unknown;
const call = (
  plugin: ReturnType<typeof dispatchHook>,
  name: "config" | "configResolved" | "configureServer" | "resolveId" | "load" | "transform",
  ...args: unknown[]
) => (plugin[name] as unknown as Hook).call({}, ...args);

describe("dispatch-hook/vite", () => {
  it("gives a watched dispatch module's own id its facade, and leaves its original id and other modules alone", () => {
    const { root, table } = frameworkTree();
    const plugin = dispatchHook();
    call(plugin, "configResolved", { root });
    const code = "export const cpuTable = new Map();\n";
    const result = call(plugin, "transform", code, table) as { code: string; map: unknown };
    expect(result.code).toContain(`export * from ${JSON.stringify(`${table}?dispatch-hook-original`)}`);
    expect(result.map).toEqual({ mappings: "" });
    // Vite's cache busting leaves an import plain; a query that gives the import a meaning does not.
    for (const query of ["v=123", "t=1&v=2"])
      expect((call(plugin, "transform", code, `${table}?${query}`) as { code: string } | null)?.code).toBe(result.code);
    for (const query of ["raw", "url", "worker", "inline", "worker_file&type=module", "copy=2", "v=1&raw"])
      expect(call(plugin, "transform", code, `${table}?${query}`)).toBeNull();
    // The original keeps its code, with a map that names its file.
    const original = call(plugin, "transform", code, `${table}?dispatch-hook-original`) as { code: string; map: { sources: string[] } };
    expect(original.code).toBe(code);
    expect(original.map.sources).toEqual([table]);
    expect(call(plugin, "transform", code, `${root}/node_modules/tensorkit/other.js`)).toBeNull();
    expect(call(plugin, "transform", code, "\0virtual:thing")).toBeNull();
  });

  it("gives the original a source map of its code onto itself, where every line and every word starts, in its file", () => {
    const { root, table } = frameworkTree();
    const plugin = dispatchHook();
    call(plugin, "configResolved", { root });
    const code = 'import { a } from "./a.js";\n\nexport function boom() {\n  throw new Error("boom " + a);\n}\n';
    type Map = { version: 3; sources: string[]; sourcesContent: string[]; names: string[]; mappings: string };
    const { map } = call(plugin, "transform", code, `${table}?dispatch-hook-original`) as { map: Map };
    expect(map.sources).toEqual([table]);
    expect(map.sourcesContent).toEqual([code]);
    const decoded = new SourceMap({ ...map, file: "table.js", sourceRoot: "" });
    let checked = 0;
    code.split("\n").forEach((text, line) => {
      for (let column = 0; column < text.length; column++) {
        if (column > 0 && /\w/.test(text[column] as string) === /\w/.test(text[column - 1] as string)) continue;
        expect(decoded.findEntry(line, column)).toMatchObject({ originalLine: line, originalColumn: column });
        checked++;
      }
    });
    expect(checked).toBeGreaterThan(20);
    expect(String((decoded.findEntry(3, 8) as { originalSource: string }).originalSource)).toContain(table);
  });

  it("resolves and loads its markers as virtual modules that signal the table and run the registration module", () => {
    const { root, table, registration } = frameworkTree();
    const plugin = dispatchHook();
    call(plugin, "configResolved", { root });
    const facade = (call(plugin, "transform", "export const cpuTable = 1;\n", table) as { code: string }).code;
    const quoted = /import ("\\u0000dispatch-hook:step:0:[^"]+")/.exec(facade)?.[1];
    const marker = quoted === undefined ? undefined : (JSON.parse(quoted) as string);
    expect(marker).toBeDefined();
    expect(call(plugin, "resolveId", marker)).toBe(marker);
    expect(call(plugin, "resolveId", "./other.js")).toBeNull();
    const loaded = call(plugin, "load", marker) as { code: string };
    expect(loaded.code).toContain("step(");
    expect(loaded.code).toContain('"host":{"name":"dispatch-hook/vite"');
    expect(facade).toContain(JSON.stringify(registration));
    expect(call(plugin, "load", table)).toBeNull();
  });

  it("reads inline declarations given to the plugin", () => {
    const { root, table } = frameworkTree();
    const plugin = dispatchHook({
      root,
      discover: false,
      backends: { cpu: { module: "./node_modules/tensorkit/backends/cpu/table.js", export: "cpuTable" } },
    });
    const result = call(plugin, "transform", "export const cpuTable = 1;\n", table) as { code: string };
    expect(result.code).toContain("dispatch-hook-original");
    // With discovery off, kit-ops's declarations were not read: no step marker.
    expect(result.code).not.toContain("step:0");
  });

  it("inlines the packages that declare backends or registrations (under Vitest; the ES ones for Vite's SSR), unless told not to, and adds Vitest's record setup file", () => {
    const { root } = frameworkTree();
    const setupFiles = [expect.stringMatching(/vitest-record\.js$/)];
    // The declared plugins, for each worker's audit.
    const provide = {
      "dispatch-hook/plugins": [
        {
          name: "kit-ops",
          declaredIn: expect.stringMatching(/kit-ops[\\/]package\.json$/),
          registrations: { cpu: expect.stringMatching(/^file:.*kit-ops\/reg\/cpu\.js$/) },
          expects: { cpu: ["Conv"] },
        },
      ],
    };
    expect(call(dispatchHook(), "config", { root, test: {} })).toEqual({
      test: { setupFiles, provide, server: { deps: { inline: ["tensorkit", "kit-ops"] } } },
    });
    expect(call(dispatchHook({ inline: false }), "config", { root, test: {} })).toEqual({ test: { setupFiles, provide } });
    // A plain Vite config (no test key, and not under Vitest): the ES packages are kept in Vite's SSR graph, unless told not to.
    const vitest = process.env.VITEST;
    delete process.env.VITEST;
    try {
      expect(call(dispatchHook(), "config", { root })).toEqual({ ssr: { noExternal: ["tensorkit", "kit-ops"] } });
      expect(call(dispatchHook({ inline: false }), "config", { root })).toBeNull();
    } finally {
      process.env.VITEST = vitest;
    }
  });

  // The warning of a CommonJS framework left to Node came on every config() call, client builds included (found by a review).
  it("names a CommonJS package Vite's SSR leaves to Node once, where SSR may run: a dev server or an SSR build", () => {
    const { root } = frameworkTree({
      "node_modules/tensorkit/package.json": JSON.stringify({
        name: "tensorkit",
        dispatchHook: { backends: { "*": { module: "./backends/{backend}/table.js", export: "{backend}Table" } } },
      }),
    });
    const warnings: string[] = [];
    const spy = vi.spyOn(process, "emitWarning").mockImplementation(((w: string) => warnings.push(w)) as never);
    const vitest = process.env.VITEST;
    delete process.env.VITEST;
    try {
      const plugin = dispatchHook();
      // Only the ES plugin package is kept in Vite's graph; a client build hears nothing.
      expect(call(plugin, "config", { root }, { command: "build", isSsrBuild: false })).toEqual({ ssr: { noExternal: ["kit-ops"] } });
      expect(warnings).toEqual([]);
      call(plugin, "configureServer");
      call(plugin, "configureServer");
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain("tensorkit is a CommonJS package");
      const build = dispatchHook();
      call(build, "config", { root }, { command: "build", isSsrBuild: true });
      expect(warnings).toHaveLength(2);
    } finally {
      process.env.VITEST = vitest;
      spy.mockRestore();
    }
  });
});
