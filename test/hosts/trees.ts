/** A framework (tensorkit: cpu backend) and a plugin (kit-ops: Conv on cpu), as the adapter tests read them. */
import { join } from "node:path";
import { appJson, makeTree } from "../integration/fixture.js";

export function frameworkTree(extra: Record<string, string> = {}): { root: string; table: string; registration: string } {
  const root = makeTree({
    "package.json": appJson({ type: "module", dependencies: { tensorkit: "*", "kit-ops": "*" } }),
    "node_modules/tensorkit/package.json": JSON.stringify({
      name: "tensorkit",
      type: "module",
      dispatchHook: { backends: { "*": { module: "./backends/{backend}/table.js", export: "{backend}Table" } } },
    }),
    "node_modules/tensorkit/backends/cpu/table.js": "export const cpuTable = new Map();\nexport default cpuTable;\n",
    "node_modules/tensorkit/other.js": "export const other = 1;\n",
    "node_modules/kit-ops/package.json": JSON.stringify({
      name: "kit-ops",
      type: "module",
      dependencies: { tensorkit: "*" },
      dispatchHook: { registrations: { cpu: "./reg/cpu.js" }, expects: { cpu: ["Conv"] } },
    }),
    "node_modules/kit-ops/reg/cpu.js": "export {};\n",
    ...extra,
  });
  return {
    root,
    table: join(root, "node_modules/tensorkit/backends/cpu/table.js"),
    registration: join(root, "node_modules/kit-ops/reg/cpu.js"),
  };
}
