import { describe, expect, it } from "vitest";
import { hub } from "../../src/hub.js";
import { Dispatcher } from "../../src/registry/dispatcher.js";
import { gatherFacts } from "../../src/registry/thread-audit.js";

class Conv {}

describe("thread facts", () => {
  it("gathers every announced table with the names it holds, and a registry's own tables once", () => {
    const table = new Dispatcher({ backend: "facts" });
    table.register(Conv, () => 1);
    hub().announce({ via: "native", namespace: "dispatch", backend: "facts", module: "file:///facts.js", table });
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

  it("asks the installed loaders, fresh each time, until they leave", () => {
    const before = hub().loaders().length;
    // What the loader watches grows as it learns; each gathering asks it anew.
    const watched: string[] = [];
    const leave = hub().addLoader({ status: () => ({ mode: "test", backends: [...watched] }), miss: () => {} });
    expect(gatherFacts().loaders).toHaveLength(before + 1);
    expect(gatherFacts().loaders.at(-1)).toMatchObject({ mode: "test", backends: [] });
    watched.push("facts-gpu");
    expect(gatherFacts().loaders.at(-1)).toMatchObject({ mode: "test", backends: ["facts-gpu"] });
    leave();
    expect(gatherFacts().loaders).toHaveLength(before);
  });
});
