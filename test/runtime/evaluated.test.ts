import { describe, expect, it } from "vitest";
import { createRegistry } from "../../src/registry/registry.js";
import { signalEvaluated } from "../../src/runtime/evaluated.js";
import { tablesOf } from "../helpers.js";

describe("signalEvaluated", () => {
  it("tells registries waiting for the backend now, and answers for the table later", () => {
    const registry = createRegistry();
    class Gpu {}
    registry.register("gpu", Gpu, () => "gpu");
    const namespace = { gpuTable: new Map() };
    signalEvaluated({ url: "file:///gpu.js", backend: "gpu", exportName: "gpuTable", format: "module" }, namespace);
    expect(namespace.gpuTable.get(Gpu)?.()).toBe("gpu");
    expect(tablesOf("gpu")).toEqual([
      {
        via: "hook",
        namespace: "dispatch",
        backend: "gpu",
        module: "file:///gpu.js",
        exports: namespace,
        exportName: "gpuTable",
        host: undefined,
      },
    ]);
    registry.dispose();
  });
});
