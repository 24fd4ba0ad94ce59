import { describe, expect, it } from "vitest";
import { matchers, test as withRegistry } from "../../src/adapters/vitest.js";
import { registry as defaultRegistry } from "../../src/default-registry.js";
import { Dispatcher } from "../../src/registry/dispatcher.js";
import { createRegistry, type Registry } from "../../src/registry/registry.js";

class PoolLayer {}
class Conv {}
const toHaveLanded = (registry: unknown, ops: readonly string[], options?: { backend?: string }) =>
  matchers.toHaveLanded.call({ isNot: false }, registry, ops, options);

describe("toHaveLanded", () => {
  it("passes when every op named was applied on the backend, and fails with the audit table when one was not", () => {
    const registry = createRegistry({ name: "matcher test" });
    const table = new Dispatcher({ name: "t", backend: "matcher-cpu" });
    registry.provide("matcher-cpu", table);
    registry.register("matcher-cpu", PoolLayer, () => 1);
    registry.register("matcher-gpu", Conv, () => 2);
    expect(toHaveLanded(registry, ["PoolLayer"], { backend: "matcher-cpu" }).pass).toBe(true);
    const failed = toHaveLanded(registry, ["PoolLayer", "Conv"]);
    expect(failed.pass).toBe(false);
    expect(failed.message()).toContain("expected Conv to have landed:");
    // The audit table, with the pending registration's row.
    expect(failed.message()).toMatch(/matcher-gpu\s+Conv\s+pending/);
    // Landed, but on another backend than the one asked for.
    expect(toHaveLanded(registry, ["PoolLayer"], { backend: "matcher-gpu" }).pass).toBe(false);
    registry.dispose();
  });

  it("fails for an op applied to a second copy of its class, once a miss has shown it, naming the copy", () => {
    const registry = createRegistry({ name: "matcher twin" });
    const table = new Dispatcher({ name: "t", backend: "matcher-twin" });
    registry.provide("matcher-twin", table);
    const Twin = (() => class PoolLayer {})();
    registry.register("matcher-twin", Twin, () => 1);
    expect(toHaveLanded(registry, ["PoolLayer"], { backend: "matcher-twin" }).pass).toBe(true);
    expect(() => table.resolve(new PoolLayer())).toThrow(/second copy/);
    const after = toHaveLanded(registry, ["PoolLayer"], { backend: "matcher-twin" });
    expect(after.pass).toBe(false);
    expect(after.message()).toContain("second copy");
    registry.dispose();
  });

  it("says what it needs when given something that is not a registry", () => {
    const result = toHaveLanded({}, ["X"]);
    expect(result.pass).toBe(false);
    expect(result.message()).toContain("needs a dispatch-hook registry");
  });
});

let previous: Registry | undefined;
describe("the registry fixture", () => {
  withRegistry("is the default registry, which plugins register into", ({ registry }) => {
    expect(registry).toBe(defaultRegistry);
    registry.register("fixture-cpu", Conv, () => 1);
    expect(registry.pending("fixture-cpu")).toHaveLength(1);
    previous = registry;
  });

  withRegistry("put back after each test: what the previous test registered is undone", ({ registry }) => {
    expect(registry).toBe(previous);
    expect(registry.pending("fixture-cpu")).toEqual([]);
    const last = registry.verify().registrations.filter((r) => r.backend === "fixture-cpu");
    expect(last.map((r) => r.state)).toEqual(["disposed"]);
  });
});

describe("the registry fixture takes back expect() too", () => {
  class Missing {}
  const table = new Map();
  withRegistry("a test names an op type that must arrive on a backend that loaded: a problem while the test runs", ({ registry }) => {
    registry.provide("fixture-expect", table);
    registry.expect("fixture-expect", [Missing.name]);
    expect(
      registry
        .verify()
        .problems.filter((p) => p.backend === "fixture-expect")
        .map((p) => p.kind),
    ).toEqual(["missing"]);
  });

  withRegistry("the next test starts without it", ({ registry }) => {
    expect(registry.verify().problems.filter((p) => p.backend === "fixture-expect")).toEqual([]);
  });
});

describe("the registry fixture with tests that run at once", () => {
  class Stubbed {}
  class Other {}
  const table = new Map<unknown, unknown>([
    [Stubbed, () => "real"],
    [Other, () => "real other"],
  ]);
  const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const call = (op: unknown) => (table.get(op) as () => string)();

  withRegistry.concurrent("a stub stays while its test runs, though a test that started later ended first", async ({ registry }) => {
    registry.provide("fixture-concurrent", table);
    registry.register("fixture-concurrent", Stubbed, () => "stub", { override: true });
    await tick(60);
    expect(call(Stubbed)).toBe("stub");
  });

  withRegistry.concurrent("the test that ends first", async ({ registry }) => {
    await tick(10);
    registry.register("fixture-concurrent", Other, () => "stub other", { override: true });
    await tick(10);
    expect(call(Other)).toBe("stub other");
  });

  withRegistry("once both ended, both stubs are undone", () => {
    expect([call(Stubbed), call(Other)]).toEqual(["real", "real other"]);
  });
});
