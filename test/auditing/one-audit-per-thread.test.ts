import { describe, expect, it } from "vitest";
import { hub } from "../../src/hub.js";
import { Dispatcher } from "../../src/registry/dispatcher.js";
import { createRegistry } from "../../src/registry/registry.js";
import { copyDirectory, gatherFacts, isDefault, markDefault, registryName, threadAudit } from "../../src/registry/thread-audit.js";
import { repoRoot } from "../integration/fixture.js";

class Conv {}

describe("threadAudit", () => {
  it("hears every registry in the thread, and of every copy, until it is disposed", () => {
    const a = createRegistry({ name: "a" });
    const b = createRegistry({ name: "b" });
    a.register("ta", Conv, () => 1);
    b.register("tb", Conv, () => 2);
    // A registry of another copy of the package answers the same way, from its own directory.
    const foreign = {
      namespace: "dispatch",
      name: "default",
      copy: "/elsewhere/dispatch-hook",
      table: () => {},
      miss: () => {},
      wrote: () => false,
      events: () => [{ kind: "requested", seq: 0, id: 0, backend: "tc", op: "Conv", site: "x.js:1" }],
    };
    hub().join(foreign);
    try {
      const report = threadAudit();
      expect(report.registrations.map((r) => [r.registry?.split(" ")[0], r.backend])).toEqual([
        ["a", "ta"],
        ["b", "tb"],
        ["default", "tc"],
      ]);
      expect(report.registrations[2]?.registry).toBe("default (/elsewhere/dispatch-hook)");
      a.dispose();
      expect(threadAudit().registrations.map((r) => r.backend)).toEqual(["tb", "tc"]);
      // No loader in this thread: nothing could serve tb.
      expect(threadAudit({ backends: ["tb"] }).problems.map((p) => [p.kind, p.backend])).toEqual([
        ["pending", "tb"],
        ["no-loader", "tb"],
      ]);
    } finally {
      hub().leave(foreign);
      b.dispose();
    }
  });

  it("counts a backend set's registrations under its namespace, never for a framework backend of the same name", () => {
    class Add {}
    const framework = createRegistry({ name: "framework" });
    const privateSet = createRegistry({ name: "set", namespace: "backends:audit-test" });
    // A second set of the same name in the realm: named as doctor and the reference name it.
    const secondSet = createRegistry({ name: "set 2", namespace: "backends#2:audit-test" });
    framework.expect("ta-cpu", ["Add"], "test");
    framework.provide("ta-cpu", new Map());
    privateSet.register("ta-cpu", Add, () => 1);
    privateSet.provide("ta-cpu", new Map());
    secondSet.register("ta-cpu", Add, () => 2);
    try {
      const report = threadAudit();
      expect(report.problems.filter((p) => p.kind === "missing").map((p) => [p.backend, p.op])).toEqual([["ta-cpu", "Add"]]);
      expect(report.registrations.map((r) => r.backend)).toContain("ta-cpu [audit-test]");
      expect(report.registrations.map((r) => r.backend)).toContain("ta-cpu [audit-test#2]");
    } finally {
      framework.dispose();
      privateSet.dispose();
      secondSet.dispose();
    }
  });
});

describe("registry identity", () => {
  it("names registries #n unless named, and knows a copy's default", () => {
    const first = registryName(undefined);
    const second = registryName(undefined);
    expect(Number(second.slice(1))).toBe(Number(first.slice(1)) + 1);
    expect(registryName("fixture")).toBe("fixture");
    const registry = {};
    expect(isDefault(registry)).toBe(false);
    expect(markDefault(registry)).toBe(registry);
    expect(isDefault(registry)).toBe(true);
  });

  it("tells the copy by its package directory", () => {
    expect(copyDirectory.replace(/\/$/, "")).toBe(repoRoot.replace(/\/$/, ""));
  });
});

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
      { backend: "facts", module: undefined, ref: new WeakRef(table) },
      { backend: "facts", module: undefined, ref: new WeakRef(own) },
      { backend: "facts", module: undefined, ref: new WeakRef(byName) },
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
