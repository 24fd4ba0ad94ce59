import { describe, expect, it } from "vitest";
import { channels, type LoaderStatusMessage } from "../../src/channel.js";
import { Dispatcher } from "../../src/registry/dispatcher.js";
import { currentWindow, gatherFacts, loaderStatus } from "../../src/registry/thread-facts.js";
import { announce } from "../../src/runtime/table-notice.js";
import { openWindow } from "../../src/runtime/window.js";

class Conv {}

describe("thread facts", () => {
  it("gathers every announced table with the names it holds, and a registry's own tables once", () => {
    const table = new Dispatcher({ backend: "facts" });
    table.register(Conv, () => 1);
    announce({ via: "native", backend: "facts", module: "file:///facts.js", table });
    const own = new Map([[class Pool {}, 1]]);
    // A table keyed by op name holds the op of that name; a key that names no op is left out.
    const byName = new Map<unknown, number>([
      ["Relu", 1],
      [Symbol("Relu"), 2],
      [7, 3],
    ]);
    const facts = gatherFacts([
      { backend: "facts", module: undefined, table },
      { backend: "facts", module: undefined, table: own },
      { backend: "facts", module: undefined, table: byName },
    ]);
    const mine = facts.tables.filter((t) => t.backend === "facts");
    expect(mine.map((t) => [...(t.names ?? [])])).toEqual([["Conv"], ["Pool"], ["Relu"]]);
  });

  it("asks the installed loaders, fresh each time", () => {
    expect(loaderStatus().installations).toEqual([]);
    const answer = (m: unknown) => (m as LoaderStatusMessage).installations.push({ mode: "test", backends: [] });
    channels.loaderStatus.subscribe(answer);
    expect(loaderStatus().installations).toHaveLength(1);
    channels.loaderStatus.unsubscribe(answer);
  });

  it("knows which registration window is open now, innermost first", () => {
    expect(currentWindow()).toBeUndefined();
    const module = { url: "file:///cw.js", backend: "cw", exportName: "t", format: "module" as const };
    const outer = openWindow({ id: "outer", url: module.url, backend: "cw", plugin: "outer", module: "file:///o.js" }, module, {});
    const inner = openWindow({ id: "inner", url: module.url, backend: "cw", plugin: "inner", module: "file:///i.js" }, module, {});
    expect(currentWindow()?.plugin).toBe("inner");
    inner.close();
    expect(currentWindow()?.plugin).toBe("outer");
    outer.close();
    expect(currentWindow()).toBeUndefined();
  });
});
