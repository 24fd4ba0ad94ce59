import { describe, expect, it } from "vitest";
import type { DispatchMiss, HubMember } from "../../src/channel.js";
import { hub } from "../../src/hub.js";
import { Dispatcher } from "../../src/registry/dispatcher.js";
import { createRegistry } from "../../src/registry/registry.js";
import { thrown } from "../helpers.js";

class Op {}
class Elemwise extends Op {}
class Add extends Elemwise {}
class Pool extends Op {}

class PoolLayer extends Op {}

const impl = (name: string) => Object.defineProperty(() => name, "name", { value: name });

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

  it("a class that reaches the table as a second copy and resolves through an ancestor is no miss, but the registration made for the first copy is an identity problem, said once", () => {
    const registry = createRegistry();
    // The plugin's Add comes from a second copy of the framework (a nested install), its parents too; the app's Add is the framework's.
    const PluginAdd = (() => {
      class Op {}
      class Elemwise extends Op {}
      return class Add extends Elemwise {};
    })();
    const table = new Dispatcher({ backend: "me-twin" });
    table.register(Elemwise, impl("generic elemwise"));
    registry.provide("me-twin", table);
    // A class resolved through an ancestor before the plugin registers: the table's index of names is made, then kept up.
    expect(table.resolve(new (class Mul extends Elemwise {})())()).toBe("generic elemwise");
    registry.register("me-twin", PluginAdd, impl("plugin add"));
    for (let i = 0; i < 3; i++) expect(table.resolve(new Add())()).toBe("generic elemwise");
    const problems = registry.verify().problems;
    expect(problems.map((p) => [p.kind, p.op])).toEqual([["identity", "Add"]]);
    expect(problems[0]?.message).toMatch(
      /^Add on me-twin \(registration #0\) was made for another class named Add, a class identity that nothing dispatches on: /,
    );
    // Said once: the message names the registration once.
    expect(problems[0]?.message.match(/registration #0/g)).toHaveLength(1);
    // The plugin's own Add still gets the plugin's implementation, and a class with no twin is not a problem.
    expect(table.resolve(new PluginAdd())()).toBe("plugin add");
    registry.dispose();
    const clean = createRegistry();
    const other = new Dispatcher({ backend: "me-twin-2" });
    other.register(Elemwise, impl("generic elemwise"));
    clean.provide("me-twin-2", other);
    clean.register("me-twin-2", Pool, impl("pool"));
    // Another class that only shares the name (another module's Add, other source text) is no copy,
    // nor is a class a factory made beside it (the same text, the same parent).
    const OtherAdd = (() => class Add extends Op {})();
    clean.register("me-twin-2", OtherAdd, impl("other add"));
    expect(other.resolve(new Add())()).toBe("generic elemwise");
    const make = () => class Float extends Elemwise {};
    const [F32, F64] = [make(), make()];
    clean.register("me-twin-2", F32, impl("f32"));
    expect([other.resolve(new F32())(), other.resolve(new F64())()]).toEqual(["f32", "generic elemwise"]);
    expect(clean.verify().problems).toEqual([]);
    clean.dispose();
  });

  it("names a registration applied elsewhere but not to the table that missed, which it was never given", () => {
    const registry = createRegistry();
    class Pool {}
    registry.register("me2", Pool, () => 1);
    registry.provide("me2", new Dispatcher({ backend: "me2" }), { module: "file:///given.js" });
    const unseen = new Dispatcher({ backend: "me2" });
    expect(thrown(() => unseen.resolve(new Pool())).message).toContain(
      "was applied to /given.js, but not to this table, which the registry was never given",
    );
    // Many instances of one module are named once, with their count.
    const kept = Array.from({ length: 30 }, () => new Dispatcher({ backend: "me2" }));
    for (const [i, table] of kept.entries()) registry.provide("me2", table, { module: `file:///many.js?v=${i}` });
    expect(thrown(() => unseen.resolve(new Pool())).message).toContain("was applied to /given.js, /many.js (30 instances), but not");
    expect(registry.verify().problems.map((p) => p.kind)).toEqual(["table"]);
    registry.dispose();
  });

  it("a miss in a table the registry withdrew with its handle is not a problem, and says it was withdrawn", () => {
    const registry = createRegistry();
    class Pool {}
    registry.provide("me3", new Dispatcher({ backend: "me3" }), { module: "file:///kept.js" });
    const withdrawn = new Dispatcher({ backend: "me3" });
    const handle = registry.provide("me3", withdrawn, { module: "file:///withdrawn.js" });
    registry.register("me3", Pool, () => 1);
    handle.dispose();
    expect(thrown(() => withdrawn.resolve(new Pool())).message).toContain("withdrawn");
    const report = registry.verify();
    expect(report.problems).toEqual([]);
    // The report names the tables that hold it, not the one withdrawn.
    expect(report.registrations[0]?.tables.map((t) => t.module)).toEqual(["file:///kept.js"]);
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

describe("the miss error", () => {
  it("names the table, the received type and its prototype chain", () => {
    const table = new Dispatcher({ name: "numbaFuncify", backend: "numba" });
    table.register(Add, () => 1);
    const error = thrown(() => table.resolve(new Pool()));
    expect(error.code).toBe("ERR_DISPATCH_NO_IMPL");
    expect(error.message).toContain('dispatch table "numbaFuncify"');
    expect(error.message).toContain("an instance of Pool");
    expect(error.message).toContain("Pool → Op → Object");
    expect(error.message).toContain("registered types: Add");
    expect(error.details.backend).toBe("numba");
    expect(error).not.toBeInstanceOf(TypeError);
  });

  it("says when a class was passed, and handles null and undefined", () => {
    const table = new Dispatcher({ name: "t" });
    expect(thrown(() => table.resolve(Pool)).message).toContain("the class Pool");
    expect(thrown(() => table.resolve(null)).message).toContain("for null");
    expect(thrown(() => table.resolve(undefined)).message).toContain("for undefined");
  });

  it("carries hints from the registries of its backend", () => {
    const table = new Dispatcher({ name: "t", backend: "mlx" });
    const seen: DispatchMiss[] = [];
    const member: HubMember = {
      namespace: "dispatch",
      name: "hinting",
      copy: "test",
      table: () => {},
      miss: (miss) => {
        seen.push(miss);
        miss.hints.push("PoolLayer is pending: no loader signalled mlx.");
      },
      wrote: () => false,
      events: () => [],
    };
    hub().listen(member, "mlx");
    try {
      const error = thrown(() => table.resolve(new Pool()));
      expect(error.message).toContain("PoolLayer is pending: no loader signalled mlx.");
      expect(error.message).not.toContain("To fix:");
    } finally {
      hub().leave(member);
    }
    expect(seen).toHaveLength(1);
    expect(seen[0]?.chain).toEqual([Pool, Op, Object]);
    expect(seen[0]?.table).toBe(table);
  });
});

describe("the miss error, with a registry behind it", () => {
  it("names the pending registrations and says the loader is missing", () => {
    // A class of its own: other tests' registries are still alive in this thread.
    class LonelyOp extends Op {}
    const registry = createRegistry({ callSites: true });
    const table = new Dispatcher({ name: "numbaFuncify", backend: "numba" });
    registry.register("numba", LonelyOp, impl("lonely"));
    const error = thrown(() => table.resolve(new LonelyOp()));
    expect(error.code).toBe("ERR_DISPATCH_NO_IMPL");
    expect(error.message).toMatch(
      /LonelyOp on numba \(registration #0, from test\/auditing\/a-miss-names-its-cause\.test\.ts:\d+\) is pending/,
    );
    // Under Vitest (as here), the miss names the Vitest plugin; elsewhere, the loader.
    expect(error.message).toContain("no dispatch-hook adapter is installed in this Vitest run");
    expect(error.message).toContain("Add plugins: [dispatchHook()]");
    const globals = globalThis as { __vitest_worker__?: unknown };
    const worker = globals.__vitest_worker__;
    delete globals.__vitest_worker__;
    try {
      const plain = thrown(() => table.resolve(new LonelyOp())).message;
      expect(plain).toContain("the dispatch-hook loader is not installed");
      expect(plain).toContain("--import dispatch-hook/loader.mjs");
    } finally {
      globals.__vitest_worker__ = worker;
    }
    registry.dispose();
    expect(thrown(() => table.resolve(new LonelyOp())).message).not.toContain("pending");
  });

  it("says when the table that missed is another module instance than the one provided", () => {
    const registry = createRegistry();
    const provided = new Dispatcher({ backend: "numba" });
    const other = new Dispatcher({ backend: "numba" });
    registry.provide("numba", provided, { module: "file:///a/basic.js" });
    registry.register("numba", PoolLayer, impl("pool"));
    const error = thrown(() => other.resolve(new PoolLayer()));
    expect(error.message).toContain("was applied to /a/basic.js, but not to this table");
    registry.dispose();
  });

  it("names a failed registration", () => {
    const registry = createRegistry();
    const table = new Dispatcher({ backend: "numba" });
    const broken = {
      register: () => {
        throw new Error("boom");
      },
    };
    registry.register("numba", PoolLayer, impl("pool"));
    registry.provide("numba", broken);
    expect(thrown(() => table.resolve(PoolLayer)).message).toContain("failed to apply");
    registry.dispose();
  });
});
