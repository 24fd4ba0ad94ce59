import { describe, expect, it } from "vitest";
import { ask, channels, type ModuleEvaluatedMessage, type TableQueryMessage } from "../../src/channel.js";
import { signalEvaluated } from "../../src/runtime/evaluated.js";

describe("signalEvaluated", () => {
  it("tells listening registries now, and answers for the table later", () => {
    const seen: ModuleEvaluatedMessage[] = [];
    const listener = (m: unknown) => seen.push(m as ModuleEvaluatedMessage);
    channels.moduleEvaluated.subscribe(listener);
    const namespace = { gpuTable: new Map() };
    try {
      signalEvaluated({ url: "file:///gpu.js", backend: "gpu", exportName: "gpuTable", format: "module" }, namespace);
    } finally {
      channels.moduleEvaluated.unsubscribe(listener);
    }
    expect(seen).toEqual([
      { version: 1, url: "file:///gpu.js", backend: "gpu", exportName: "gpuTable", format: "module", namespace, realm: globalThis },
    ]);
    const answers = ask<TableQueryMessage>(channels.tableQuery, { version: 1, answers: [] }).answers;
    expect(answers.find((n) => n.via === "hook" && n.module === "file:///gpu.js")).toMatchObject({ backend: "gpu", namespace });
  });
});
