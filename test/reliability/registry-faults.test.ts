// Faults inside the registry: every case ends with the audit accounting for every registration,
// none missing and none double-counted.
import { describe, expect, it } from "vitest";
import type { AuditReport } from "../../src/registry/audit-events.js";
import { type Class, Dispatcher } from "../../src/registry/dispatcher.js";
import { DispatchHookError } from "../../src/registry/errors.js";
import { createRegistry, type Registry } from "../../src/registry/registry.js";

/** Every accepted registration appears exactly once, with exactly the expected state. */
function accountsFor(registry: Registry, expected: Record<number, string>): AuditReport {
  const report = registry.verify();
  const ids = report.registrations.map((r) => r.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect(Object.fromEntries(report.registrations.map((r) => [r.id, r.state]))).toEqual(expected);
  // No (registration, table) pair is applied twice.
  const applied = registry.audit.events().filter((e) => e.kind === "applied");
  const pairs = applied.map((e) => (e.kind === "applied" ? `${e.id}@${e.table}` : ""));
  expect(new Set(pairs).size).toBe(pairs.length);
  return report;
}

const classes = (n: number): Class[] => Array.from({ length: n }, (_, i) => ({ [`Op${i}`]: class {} })[`Op${i}`] as Class);

describe("faults while applying", () => {
  it("a custom adapter's set() throws for one op: the others apply, the audit records failed with the error", () => {
    const [a, b, c] = classes(3) as [Class, Class, Class];
    const registry = createRegistry();
    const store = new Map<Class, unknown>();
    registry.declare("numba", {
      adapter: {
        get: (_t, type) => store.get(type) as never,
        set: (_t, type, fn) => {
          if (type === b) throw new TypeError("adapter cannot store Op1");
          store.set(type, fn);
        },
        delete: (_t, type) => {
          store.delete(type);
        },
      },
    });
    for (const type of [a, b, c]) registry.register("numba", type, () => type.name);
    registry.provide("numba", {});
    expect([...store.keys()]).toEqual([a, c]);
    const report = accountsFor(registry, { 0: "applied", 1: "failed", 2: "applied" });
    expect(report.problems).toMatchObject([{ kind: "failed", op: "Op1" }]);
    expect(report.problems[0]?.message).toContain("adapter cannot store Op1");
  });

  it("the table's own register() throws, on one of two tables: the other table still gets everything", () => {
    const [a] = classes(1) as [Class];
    const registry = createRegistry();
    const good = new Dispatcher({ backend: "jax" });
    const bad = {
      register() {
        throw new Error("read-only table");
      },
    };
    registry.register("jax", a, () => 1);
    registry.provide("jax", bad, { module: "file:///copy-a.js" });
    registry.provide("jax", good, { module: "file:///copy-b.js" });
    expect(good.resolve(a)()).toBe(1);
    const report = accountsFor(registry, { 0: "failed" });
    expect(report.registrations[0]?.tables.map((t) => [t.module, t.outcome])).toEqual([
      ["file:///copy-a.js", "failed"],
      ["file:///copy-b.js", "applied"],
    ]);
  });

  it("a table whose get() throws fails only that registration, and nothing is written over what it may hold", () => {
    const [a, b] = classes(2) as [Class, Class];
    const registry = createRegistry();
    const table = {
      entries: new Map<Class, unknown>(),
      register(type: Class, fn: unknown) {
        this.entries.set(type, fn);
      },
      get(type: Class) {
        if (type === a) throw new Error("lookup exploded");
        return undefined;
      },
    };
    registry.register("mlx", a, () => 1);
    registry.register("mlx", b, () => 2);
    registry.provide("mlx", table);
    expect([...table.entries.keys()]).toEqual([b]);
    accountsFor(registry, { 0: "failed", 1: "applied" });
  });

  it("a write that failed leaves no claim on the op type: a later registration over the framework's entry is refused", () => {
    const [a] = classes(1) as [Class];
    const registry = createRegistry();
    const store = new Map<Class, unknown>();
    let fail = true;
    registry.declare("numba", {
      adapter: {
        get: (_t, type) => store.get(type) as never,
        set: (_t, type, fn) => {
          if (fail) {
            fail = false;
            throw new Error("set failed once");
          }
          store.set(type, fn);
        },
        delete: (_t, type) => void store.delete(type),
      },
    });
    registry.provide("numba", {});
    registry.register("numba", a, () => "first").dispose();
    const framework = () => "framework";
    store.set(a, framework);
    registry.register("numba", a, () => "second");
    expect(store.get(a)).toBe(framework);
    accountsFor(registry, { 0: "disposed", 1: "refused" });
  });
});

describe("a fault in one write leaves the registry's own claims as they were", () => {
  it("a get() that throws while an override applies: the first registration comes back as the registry's, and leaves when disposed", () => {
    const [a] = classes(1) as [Class];
    const registry = createRegistry();
    const store = new Map<Class, unknown>();
    let failGet = false;
    registry.declare("numba", {
      adapter: {
        get: (_t, type) => {
          if (failGet) {
            failGet = false;
            throw new Error("get fault");
          }
          return store.get(type) as never;
        },
        set: (_t, type, fn) => void store.set(type, fn),
        delete: (_t, type) => void store.delete(type),
      },
    });
    registry.provide("numba", {});
    const first = () => "first";
    const owner = registry.register("numba", a, first);
    failGet = true;
    registry.register("numba", a, () => "second", { override: true }).dispose();
    expect(owner.state).toBe("applied");
    owner.dispose();
    expect(store.has(a)).toBe(false);
    expect(registry.verify().ok).toBe(true);
  });

  it("an override disposed after the framework wrote over it: the one it replaced does not come back over the framework's entry", () => {
    const [a] = classes(1) as [Class];
    const registry = createRegistry();
    const table = new Dispatcher({ backend: "numba" });
    registry.provide("numba", table);
    registry.register("numba", a, () => "first");
    const override = registry.register("numba", a, () => "second", { override: true });
    const late = () => "framework default, filled late";
    table.register(a, late);
    override.dispose();
    expect(table.get(a)).toBe(late);
    // What the registry still has there did not land: the audit says so.
    expect(registry.verify().ok).toBe(false);
  });
});

describe("refusals are audited and change nothing", () => {
  it("a sealed backend refuses; replacing without override refuses; both appear in the audit", () => {
    const [a] = classes(1) as [Class];
    const registry = createRegistry();
    const table = new Dispatcher({ backend: "numba" });
    const original = () => "framework";
    table.register(a, original);
    registry.provide("numba", table);
    // Replacing the framework's own implementation needs override: refused at apply, audited.
    const sneaky = registry.register("numba", a, () => "plugin");
    expect(table.get(a)).toBe(original);
    expect(sneaky.state).toBe("refused");
    registry.seal("numba");
    expect(() => registry.register("numba", class Other {}, () => 0)).toThrow(DispatchHookError);
    const refused = registry.audit.events().filter((e) => e.kind === "refused");
    expect(refused.map((e) => (e.kind === "refused" ? e.code : ""))).toEqual(["ERR_DISPATCH_CONFLICT", "ERR_DISPATCH_SEALED"]);
    accountsFor(registry, { 0: "refused", 1: "refused" });
  });
});

describe("reserved words are plain data", () => {
  it("op types named __proto__, constructor and prototype register, apply and audit normally", () => {
    const named = (name: string) => ({ [name]: class {} })[name] as Class;
    const types = ["__proto__", "constructor", "prototype", "hasOwnProperty"].map(named);
    const registry = createRegistry();
    const table = new Dispatcher({ backend: "numba" });
    registry.expect("numba", ["__proto__", "constructor", "prototype", "toString"]);
    for (const type of types) registry.register("numba", type, () => type.name);
    registry.provide("numba", table);
    for (const type of types) expect(table.resolve(type)()).toBe(type.name);
    const report = registry.verify();
    expect(report.problems.map((p) => [p.kind, p.op])).toEqual([["missing", "toString"]]);
    expect(registry.format()).toContain("__proto__");
    expect(JSON.parse(registry.audit.toJSONLines().split("\n")[0] as string).kind).toBe("expected");
    expect(({} as Record<string, unknown>).numba).toBeUndefined();
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  });
});

/** xorshift32: a fixed seed gives the same run on every machine. */
function prng(seed: number) {
  let s = seed;
  return (n: number) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

describe("randomized soak", () => {
  it("10,000 registrations across 100 backends, with provide, register and dispose interleaved, end as a simple model predicts", () => {
    const random = prng(0x5eed);
    const backends = Array.from({ length: 100 }, (_, i) => `backend${i}`);
    const ops = classes(40);
    const impls = Array.from({ length: 5 }, (_, i) => () => i);
    const registry = createRegistry({ callSites: false });
    const tables = new Map<string, Array<Map<Class, unknown>>>();
    // The model: which (backend, op) is owned by which registration, who waits behind it (the same
    // implementation registered again), and each registration's fate.
    type Entry = { id: number; key: string; impl: unknown; handle: { dispose(): void } };
    const owner = new Map<string, Entry>();
    const waiting = new Map<string, Entry[]>();
    const fate = new Map<number, "live" | "waiting" | "disposed">();
    const open = new Map<number, Entry>();
    let attempts = 0;
    let conflicts = 0;
    while (attempts < 10_000) {
      const roll = random(100);
      if (roll < 70) {
        attempts++;
        const backend = backends[random(backends.length)] as string;
        const op = ops[random(ops.length)] as Class;
        const impl = impls[random(impls.length)] as () => number;
        const key = `${backend} ${op.name}`;
        const current = owner.get(key);
        if (current !== undefined && current.impl !== impl) {
          expect(() => registry.register(backend, op, impl)).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_CONFLICT" }));
          conflicts++;
          continue;
        }
        const handle = registry.register(backend, op, impl);
        const entry = { id: handle.id, key, impl, handle };
        open.set(entry.id, entry);
        if (current !== undefined) {
          expect(handle.id).not.toBe(current.id);
          waiting.set(key, [entry, ...(waiting.get(key) ?? [])]);
          fate.set(entry.id, "waiting");
          continue;
        }
        owner.set(key, entry);
        fate.set(entry.id, "live");
      } else if (roll < 85) {
        if (open.size === 0) continue;
        const entries = [...open.values()];
        const entry = entries[random(entries.length)] as Entry;
        entry.handle.dispose();
        open.delete(entry.id);
        fate.set(entry.id, "disposed");
        if (owner.get(entry.key) === entry) {
          owner.delete(entry.key);
          const heir = waiting.get(entry.key)?.pop();
          if (heir !== undefined) {
            owner.set(entry.key, heir);
            fate.set(heir.id, "live");
          }
        } else {
          waiting.set(
            entry.key,
            (waiting.get(entry.key) ?? []).filter((e) => e !== entry),
          );
        }
      } else {
        const backend = backends[random(backends.length)] as string;
        const table = new Map<Class, unknown>();
        registry.provide(backend, table);
        tables.set(backend, [...(tables.get(backend) ?? []), table]);
      }
    }
    // Every table holds exactly the live registrations of its backend.
    for (const [backend, list] of tables) {
      const expected = new Map([...owner].filter(([key]) => key.startsWith(`${backend} `)).map(([key, e]) => [key.split(" ")[1], e.impl]));
      for (const table of list) {
        expect(new Map([...table].map(([type, impl]) => [type.name, impl]))).toEqual(expected);
      }
    }
    // And the audit names the same fate for every registration.
    const report = registry.verify();
    // A refused conflict is a registration of its own, refused: thrown at the caller, and kept in the audit.
    expect(report.registrations).toHaveLength(fate.size + conflicts);
    for (const record of report.registrations) {
      const f = fate.get(record.id);
      const expected =
        f === undefined
          ? "refused"
          : f === "disposed"
            ? "disposed"
            : f === "waiting"
              ? "superseded"
              : tables.has(record.backend)
                ? "applied"
                : "pending";
      expect(record.state).toBe(expected);
      if (expected === "applied") expect(record.tables).toHaveLength(tables.get(record.backend)?.length ?? 0);
    }
    // The only problems are the refused conflicts, each once.
    expect(report.problems.filter((p) => p.kind !== "conflict")).toEqual([]);
    expect(report.problems).toHaveLength(conflicts);
    expect(fate.size).toBeGreaterThan(1000);
  });
});
