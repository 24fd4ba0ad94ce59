import { describe, expect, it } from "vitest";
import "../../src/adapters/vitest-setup.js";
import { Dispatcher } from "../../src/registry/dispatcher.js";
import { createRegistry } from "../../src/registry/registry.js";

class Pool {}

describe("dispatch-hook/vitest/setup", () => {
  it("adds toHaveLanded() to expect", () => {
    const registry = createRegistry({ name: "setup test" });
    registry.provide("setup-cpu", new Dispatcher({ name: "t", backend: "setup-cpu" }));
    registry.register("setup-cpu", Pool, () => 1);
    expect(registry).toHaveLanded(["Pool"], { backend: "setup-cpu" });
    expect(() => expect(registry).toHaveLanded(["Missing"])).toThrow(/expected Missing to have landed/);
    registry.dispose();
  });
  // That it fails a test which leaves a registration pending is checked in a real Vitest run
  // (test/integration/vitest-helpers.test.ts): here it would fail this file.
});
