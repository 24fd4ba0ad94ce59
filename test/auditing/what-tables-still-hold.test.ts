import { describe, expect, it } from "vitest";
import { createRegistry } from "../../src/registry/registry.js";

class Add {}

/** A register()-shaped table that keeps what `store` makes of each implementation. */
function table(store: (f: () => unknown) => unknown, give: (kept: unknown) => unknown = (kept) => kept) {
  const entries = new Map<unknown, unknown>();
  return {
    entries,
    register: (type: unknown, f: () => unknown) => void entries.set(type, store(f)),
    unregister: (type: unknown) => entries.delete(type),
    get: (type: unknown) => give(entries.get(type)),
  };
}

const kinds = (registry: ReturnType<typeof createRegistry>) => registry.verify().problems.map((p) => p.kind);

describe("what a table still holds of what landed", () => {
  it("an entry replaced or removed behind the registry's back is displaced; the table as it was is not", () => {
    const registry = createRegistry({ name: "holds" });
    const map = new Map();
    registry.provide("th-cpu", map);
    registry.register("th-cpu", Add, () => "plugin");
    expect(kinds(registry)).toEqual([]);
    map.set(Add, () => "framework default");
    expect(kinds(registry)).toEqual(["displaced"]);
    map.delete(Add);
    expect(registry.verify().problems[0]?.message).toContain("removed the entry");
    registry.dispose();
  });

  it("a table that wraps implementations, or gives a new function on every get(), is judged by what it gave back", () => {
    const registry = createRegistry({ name: "wraps" });
    const wrapping = table((f) => () => f());
    const fresh = table(
      (f) => f,
      (kept) => (typeof kept === "function" ? kept.bind(null) : kept),
    );
    registry.provide("th-wrap", wrapping);
    registry.provide("th-fresh", fresh);
    registry.register("th-wrap", Add, () => 1);
    registry.register("th-fresh", Add, () => 2);
    expect(kinds(registry)).toEqual([]);
    wrapping.entries.set(Add, () => "someone else's");
    expect(kinds(registry)).toEqual(["displaced"]);
    registry.dispose();
  });

  it("another registry's audited override is no problem, in a wrapping table too, and disposing the first leaves it in place", () => {
    for (const make of [() => new Map(), () => table((f) => () => f())]) {
      const first = createRegistry({ name: "first" });
      const second = createRegistry({ name: "second" });
      const t = make();
      first.provide("th-over", t);
      second.provide("th-over", t);
      const mine = first.register("th-over", Add, () => "first");
      second.register("th-over", Add, () => "second", { override: true });
      expect(kinds(first)).toEqual([]);
      expect(kinds(second)).toEqual([]);
      mine.dispose();
      // The second registry's entry stays: the first gives back only what it put there.
      expect((t.get(Add) as () => unknown)()).toBe("second");
      expect(kinds(second)).toEqual([]);
      first.dispose();
      second.dispose();
    }
  });
});
