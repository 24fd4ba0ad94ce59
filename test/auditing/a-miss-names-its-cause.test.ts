import { describe, expect, it } from "vitest";
import { Dispatcher } from "../../src/registry/dispatcher.js";
import { createRegistry } from "../../src/registry/registry.js";
import { thrown } from "../helpers.js";

describe("the miss explainer", () => {
  it("names a registration made for another class of the same name, and records it once", () => {
    const registry = createRegistry();
    const Conv = class Conv {};
    const Twin = (() => class Conv {})();
    const table = new Dispatcher({ backend: "me1" });
    registry.register("me1", Conv, () => 1);
    registry.provide("me1", table);
    for (let i = 0; i < 3; i++) expect(thrown(() => table.resolve(new Twin())).message).toContain("made for another class named Conv");
    expect(registry.verify().problems.map((p) => p.kind)).toEqual(["identity"]);
    registry.dispose();
  });

  it("names a registration applied elsewhere but not to the table that missed, which it was never given", () => {
    const registry = createRegistry();
    class Pool {}
    registry.register("me2", Pool, () => 1);
    registry.provide("me2", new Dispatcher({ backend: "me2" }), { module: "file:///given.js" });
    const unseen = new Dispatcher({ backend: "me2" });
    expect(thrown(() => unseen.resolve(new Pool())).message).toContain(
      "was applied to file:///given.js, but not to this table, which the registry was never given",
    );
    expect(registry.verify().problems.map((p) => p.kind)).toEqual(["table"]);
    registry.dispose();
  });

  it("lists everything else pending on the backend: one miss is rarely alone", () => {
    const registry = createRegistry();
    class A {}
    class B {}
    registry.register("me3", A, () => 1);
    registry.register("me3", B, () => 1);
    const message = thrown(() => new Dispatcher({ backend: "me3" }).resolve(new A())).message;
    expect(message).toContain("is pending: no me3 table ever reached dispatch-hook");
    expect(message).toContain("2 registrations are pending on me3: A (#0), B (#1)");
    registry.dispose();
  });
});
