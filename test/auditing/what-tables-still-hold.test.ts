import { describe, expect, it } from "vitest";
import { announce } from "../../src/announce.js";
import { hub } from "../../src/hub.js";
import { Dispatcher } from "../../src/registry/dispatcher.js";
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
  it("a dispatch module that replaced its table since it loaded: the registration is not in the table it exports now", () => {
    const registry = createRegistry({ name: "replaced" });
    registry.register("rp-gpu", Add, () => "plugin");
    const namespace = { table: new Dispatcher({ backend: "rp-gpu" }) };
    const module = "file:///rp/gpu.js";
    hub().announce({ via: "hook", namespace: "dispatch", backend: "rp-gpu", module, exports: namespace, exportName: "table" });
    expect(kinds(registry)).toEqual([]);
    // The framework resets its table by making a new one (export let table; table = new Dispatcher()).
    namespace.table = new Dispatcher({ backend: "rp-gpu" });
    const problems = registry.verify().problems;
    expect(problems.map((p) => p.kind)).toEqual(["displaced"]);
    expect(problems[0]?.message).toContain("now exports another rp-gpu table");
    // Announced, the new table gets the registration, and the audit is satisfied again.
    announce("rp-gpu", namespace.table, { module });
    expect(namespace.table.has(Add)).toBe(true);
    expect(kinds(registry)).toEqual([]);
    registry.dispose();
  });

  it("an older registry's implementation written back over a newer override is displaced", () => {
    const table = new Dispatcher({ backend: "th-gpu" });
    const older = createRegistry({ name: "older" });
    const newer = createRegistry({ name: "newer" });
    older.provide("th-gpu", table);
    newer.provide("th-gpu", table);
    const a = () => "a";
    older.register("th-gpu", Add, a);
    newer.register("th-gpu", Add, () => "b", { override: true });
    expect([kinds(older), kinds(newer)]).toEqual([[], []]);
    // Code around both registries puts the older one's implementation back.
    table.register(Add, a);
    expect(kinds(newer)).toEqual(["displaced"]);
    older.dispose();
    newer.dispose();
  });

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

  it("a table that wraps implementations, or gives a new function on every get(), raises no alarm while it holds an entry", () => {
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
    // What it makes of an implementation can change (a cache cleared, a wrapper made again): only a removal is sure.
    wrapping.entries.set(Add, () => "someone else's");
    expect(kinds(registry)).toEqual([]);
    wrapping.entries.delete(Add);
    fresh.entries.delete(Add);
    expect(kinds(registry)).toEqual(["displaced", "displaced"]);
    registry.dispose();
  });

  it("a table that memoizes or binds what it is given is asked only whether the entry is gone, and says so when it is", () => {
    const registry = createRegistry({ name: "memo" });
    // A cache of bound functions, cleared on every register(), as a single-dispatch cache is.
    const cache = new Map<unknown, unknown>();
    const memo = table(
      (f) => f,
      (kept) => {
        if (typeof kept !== "function") return kept;
        if (!cache.has(kept)) cache.set(kept, kept.bind(null));
        return cache.get(kept);
      },
    );
    const register = memo.register;
    memo.register = (type, f) => {
      cache.clear();
      register(type, f);
    };
    registry.provide("th-memo", memo);
    registry.register("th-memo", Add, () => "add");
    registry.register("th-memo", class Pool {}, () => "pool");
    expect(kinds(registry)).toEqual([]);
    memo.unregister(Add);
    expect(kinds(registry)).toEqual(["displaced"]);
    registry.dispose();
  });

  it("a table whose get() throws is asked nothing: a registration fails there rather than write over an entry it could not see, and the audit does not guess", () => {
    const registry = createRegistry({ name: "raises" });
    const framework = () => "framework";
    const raising = table(
      (f) => f,
      (kept) => {
        if (kept === framework || kept === undefined) throw new Error("lookup exploded");
        return kept;
      },
    );
    raising.entries.set(Add, framework);
    registry.provide("th-raise", raising);
    registry.register("th-raise", Add, () => "add");
    expect(registry.verify().registrations.map((r) => r.state)).toEqual(["failed"]);
    expect(raising.entries.get(Add)).toBe(framework);
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

describe("overrides across registries, disposed in any order", () => {
  const orders = ["ABC", "ACB", "BAC", "BCA", "CAB", "CBA"];
  for (const order of orders) {
    it(`registered A, B over A, C over B, disposed ${order.split("").join(", ")}: the table holds the newest live one, then the framework's own`, () => {
      const framework = () => "framework";
      const map = new Map<unknown, unknown>([[Add, framework]]);
      const names = ["A", "B", "C"] as const;
      const registries = names.map((name) => createRegistry({ name: `chain ${name}` }));
      const impls = names.map((name) => () => name);
      const handles = registries.map((r, i) => {
        r.provide("th-chain", map);
        return r.register("th-chain", Add, impls[i] as () => string, { override: true });
      });
      const live = new Set<number>([0, 1, 2]);
      expect(map.get(Add)).toBe(impls[2]);
      for (const name of order) {
        const i = names.indexOf(name as (typeof names)[number]);
        handles[i]?.dispose();
        live.delete(i);
        const newest = Math.max(-1, ...live);
        expect(map.get(Add)).toBe(newest < 0 ? framework : impls[newest]);
        for (const r of registries) expect(kinds(r)).toEqual([]);
      }
      for (const r of registries) r.dispose();
    });
  }
});

describe("overrides across registries, superseded inside one", () => {
  it("A over the framework, B over A, B's second over its first: disposed B's first, A, B's second, the framework's entry comes back", () => {
    const framework = () => "framework";
    const map = new Map<unknown, unknown>([[Add, framework]]);
    const [A, B] = [createRegistry({ name: "heir A" }), createRegistry({ name: "heir B" })];
    A.provide("th-heir", map);
    B.provide("th-heir", map);
    const a = A.register("th-heir", Add, () => "a", { override: true });
    const b = B.register("th-heir", Add, () => "b", { override: true });
    const b2 = B.register("th-heir", Add, () => "b2", { override: true });
    expect((map.get(Add) as () => string)()).toBe("b2");
    b.dispose();
    a.dispose();
    expect((map.get(Add) as () => string)()).toBe("b2");
    b2.dispose();
    expect(map.get(Add)).toBe(framework);
    for (const r of [A, B]) {
      expect(kinds(r)).toEqual([]);
      r.dispose();
    }
  });
});

describe("the same function registered by two registries", () => {
  for (const order of ["AB", "BA"]) {
    it(`over the framework's entry, disposed ${order.split("").join(", ")}: the function stays while either holds it, then the framework's entry comes back`, () => {
      const framework = () => "framework";
      const shared = () => "shared";
      const map = new Map<unknown, unknown>([[Add, framework]]);
      const registries = { A: createRegistry({ name: "same A" }), B: createRegistry({ name: "same B" }) };
      const handles = Object.fromEntries(
        Object.entries(registries).map(([name, r]) => {
          r.provide("th-same", map);
          return [name, r.register("th-same", Add, shared, { override: true })];
        }),
      );
      const [first, second] = order.split("") as ["A" | "B", "A" | "B"];
      handles[first]?.dispose();
      expect(map.get(Add)).toBe(shared);
      handles[second]?.dispose();
      expect(map.get(Add)).toBe(framework);
      for (const r of Object.values(registries)) {
        expect(kinds(r)).toEqual([]);
        r.dispose();
      }
    });
  }
});

describe("an override's predecessor inside one registry comes back behind a newer registry's entry", () => {
  it("A registers three over the framework, B one over them; disposing A's newest leaves B's in the table, and A's second comes back when B leaves", () => {
    const framework = () => "framework";
    const map = new Map<unknown, unknown>([[Add, framework]]);
    const [A, B] = [createRegistry({ name: "heir A" }), createRegistry({ name: "heir B" })];
    for (const r of [A, B]) r.provide("th-heir", map);
    const [a1, a2, a3] = [1, 2, 3].map((n) => A.register("th-heir", Add, () => `a${n}`, { override: true }));
    const b = B.register("th-heir", Add, () => "b", { override: true });
    a3?.dispose();
    expect((map.get(Add) as () => string)()).toBe("b");
    expect(kinds(A)).toEqual([]);
    b.dispose();
    expect((map.get(Add) as () => string)()).toBe("a2");
    a2?.dispose();
    expect((map.get(Add) as () => string)()).toBe("a1");
    a1?.dispose();
    expect(map.get(Add)).toBe(framework);
    for (const r of [A, B]) r.dispose();
  });
});

describe("any order of overrides and disposals across registries", () => {
  // The rule, as the reference states it: inside a registry, an override takes over and the one it
  // replaced waits, newest last; the same function again waits behind the first; disposing the owner
  // brings back the newest waiting. Across registries, the table holds the live owner registered
  // last, else the framework's own entry (or none).
  const trial = (seed: number, shared: boolean, wrapping: boolean): string | undefined => {
    let state = seed;
    const random = () => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state / 2147483648;
    };
    const framework = () => "framework";
    const hasFramework = random() < 0.7;
    // A Map, or a register()-shaped table that wraps each function it is given (its get() gives the wrapper).
    const wrap = (f: unknown) => Object.assign((...args: unknown[]) => (f as (...a: unknown[]) => unknown)(...args), { inner: f });
    const entries = new Map<unknown, unknown>(hasFramework ? [[Add, wrapping ? wrap(framework) : framework]] : []);
    const target = wrapping
      ? {
          register: (type: unknown, f: unknown) => void entries.set(type, wrap(f)),
          get: (type: unknown) => entries.get(type),
          unregister: (type: unknown) => entries.delete(type),
        }
      : entries;
    const holds = () => {
      let f = entries.get(Add) as { inner?: unknown } | undefined;
      while (f?.inner !== undefined) f = f.inner as { inner?: unknown };
      return f;
    };
    const pool = [() => "f0", () => "f1", () => "f2"];
    const registries = Array.from({ length: 2 + Math.floor(random() * 2) }, (_, i) => createRegistry({ name: `order ${seed} ${i}` }));
    for (const r of registries) r.provide("th-order", target);
    type Live = { handle: { dispose(): void }; f: unknown; seq: number; owner: number };
    const model = registries.map(() => ({ owner: undefined as Live | undefined, waiting: [] as Live[] }));
    const live: Live[] = [];
    const log: string[] = [];
    const expected = () => {
      let newest: Live | undefined;
      for (const m of model) if (m.owner !== undefined && (newest === undefined || m.owner.seq > newest.seq)) newest = m.owner;
      return newest?.f ?? (hasFramework ? framework : undefined);
    };
    const check = () => {
      if (holds() !== expected()) return `seed ${seed}: ${log.join(", ")}`;
      // Nothing went around the registries: no registry may say its entry was displaced.
      const displaced = registries.findIndex((r) => kinds(r).includes("displaced"));
      return displaced < 0 ? undefined : `seed ${seed}: r${displaced} says displaced after ${log.join(", ")}`;
    };
    let wrong: string | undefined;
    const steps = 3 + Math.floor(random() * 4);
    for (let seq = 0; seq < steps && wrong === undefined; seq++) {
      const owner = Math.floor(random() * registries.length);
      const f = shared ? pool[Math.floor(random() * pool.length)] : () => `g${seq}`;
      const entry: Live = {
        handle: (registries[owner] as (typeof registries)[0]).register("th-order", Add, f as () => string, { override: true }),
        f,
        seq,
        owner,
      };
      const m = model[owner] as (typeof model)[0];
      if (m.owner?.f === f) m.waiting.unshift(entry);
      else {
        if (m.owner !== undefined) m.waiting.push(m.owner);
        m.owner = entry;
      }
      live.push(entry);
      log.push(`r${owner} registers #${seq}`);
      wrong = check();
    }
    while (wrong === undefined && live.length > 0) {
      const [entry] = live.splice(Math.floor(random() * live.length), 1) as [Live];
      const m = model[entry.owner] as (typeof model)[0];
      if (m.owner === entry) m.owner = m.waiting.pop();
      else m.waiting.splice(m.waiting.indexOf(entry), 1);
      entry.handle.dispose();
      log.push(`#${entry.seq} disposed`);
      wrong = check();
    }
    for (const r of registries) r.dispose();
    return wrong;
  };

  for (const [shared, wrapping] of [
    [false, false],
    [true, false],
    [false, true],
  ]) {
    it(`the table always holds the newest live registration, and no registry says displaced (${shared ? "functions shared between registrations" : "a function each"}, ${wrapping ? "a table that wraps them" : "a Map"}, 400 seeded orders)`, () => {
      const wrong = Array.from({ length: 400 }, (_, i) => trial(i + 1, shared as boolean, wrapping as boolean)).filter(
        (w) => w !== undefined,
      );
      expect(wrong.slice(0, 3)).toEqual([]);
    });
  }
});
