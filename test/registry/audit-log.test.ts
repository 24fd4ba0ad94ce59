import { describe, expect, it } from "vitest";
import { AuditLog, summarizeError } from "../../src/registry/audit-log.js";
import { Dispatcher } from "../../src/registry/dispatcher.js";
import { DispatchHookError } from "../../src/registry/errors.js";
import { createRegistry } from "../../src/registry/registry.js";

class PoolLayer {}
class Im2Col {}
class Col2Im {}

describe("AuditLog", () => {
  it("numbers events and returns copies", () => {
    const log = new AuditLog();
    log.record({ kind: "sealed", backend: "numba", sealed: true });
    log.record({ kind: "sealed", backend: "jax", sealed: true });
    const events = log.events();
    expect(events.map((e) => e.seq)).toEqual([0, 1]);
    (events as unknown[]).length = 0;
    expect(log.size).toBe(2);
  });

  it("verify() names every problem kind", () => {
    const registry = createRegistry();
    const numba = new Map();
    // pending on a provided backend cannot arise inside one registry, so feed the log directly below.
    registry.expect("numba", ["PoolLayer", "Im2Col", "Col2Im"], "ml-ops/package.json");
    registry.register("numba", PoolLayer, () => 0);
    registry.register("numba", Im2Col, () => 0);
    registry.provide("numba", {
      register(type: unknown) {
        if (type === Im2Col) throw new Error("no room");
        numba.set(type, 1);
      },
    });
    registry.register("jax", PoolLayer, () => 0);
    const report = registry.verify();
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => [p.kind, p.backend, p.op])).toEqual([
      ["failed", "numba", "Im2Col"],
      ["missing", "numba", "Col2Im"],
    ]);
    expect(report.problems[1]?.message).toContain("expected (by ml-ops/package.json) but never registered");
    expect(report.backends).toEqual([
      { backend: "jax", tables: 0, sealed: false },
      { backend: "numba", tables: 1, sealed: false },
    ]);
    // Naming jax makes its pending registration a problem.
    const focused = registry.verify({ backends: ["jax"] });
    expect(focused.problems.map((p) => [p.kind, p.op])).toEqual([["pending", "PoolLayer"]]);
    expect(focused.problems[0]?.message).toContain("no jax table was ever provided");
  });

  it("reports a pending registration whose backend has a table", () => {
    const log = new AuditLog();
    log.record({ kind: "requested", id: 0, backend: "numba", op: "PoolLayer", site: "plugin.js:3" });
    log.record({ kind: "provided", backend: "numba", table: 0, tableKind: "Map", module: undefined, mechanism: "hook" });
    const report = log.verify();
    expect(report.problems).toMatchObject([{ kind: "pending", op: "PoolLayer" }]);
    expect(report.problems[0]?.message).toContain("although the numba table was provided");
  });

  it("assertComplete() throws one error listing every problem", () => {
    const registry = createRegistry();
    registry.expect("numba", ["PoolLayer", "Col2Im"]);
    registry.register("numba", Im2Col, () => 0);
    let error: unknown;
    try {
      registry.assertComplete({ backends: ["numba"] });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DispatchHookError);
    const { code, message } = error as DispatchHookError;
    expect(code).toBe("ERR_DISPATCH_INCOMPLETE");
    expect(message).toContain("3 registration problems for numba");
    expect(message).toContain("[missing] PoolLayer");
    expect(message).toContain("[missing] Col2Im");
    expect(message).toContain("[pending] Im2Col");
    // Unnamed, a lazy backend that never loaded is not a problem yet.
    expect(() => registry.assertComplete()).not.toThrow();
    registry.register("numba", PoolLayer, () => 0);
    registry.register("numba", Col2Im, () => 0);
    registry.provide("numba", new Map());
    expect(() => registry.assertComplete({ backends: ["numba"] })).not.toThrow();
    expect(registry.verify().ok).toBe(true);
  });

  it("toJSON() gives one parseable event per line", () => {
    const registry = createRegistry();
    registry.register("numba", PoolLayer, () => 0);
    registry.provide("numba", new Map(), { module: 'file:///a "quoted"\nname.js' });
    const lines = registry.audit.toJSON().split("\n");
    expect(lines).toHaveLength(3);
    const events = lines.map((line) => JSON.parse(line));
    expect(events.map((e) => e.kind)).toEqual(["requested", "provided", "applied"]);
    expect(events[0].site).toMatch(/audit-log\.test\.ts:\d+$/);
    expect(events[2].module).toBe('file:///a "quoted"\nname.js');
  });

  it("format() prints an aligned table and the problems", () => {
    const registry = createRegistry();
    registry.register("numba", PoolLayer, () => 0);
    registry.register("jax", Im2Col, () => 0);
    registry.provide("numba", new Dispatcher({ backend: "numba" }), { module: "file:///tl/numba.js", via: "hook" });
    const text = registry.audit.format({ backends: ["jax"] });
    const lines = text.split("\n");
    expect(lines[0]).toMatch(/^id\s+backend\s+op\s+state\s+via\s+site\s+module$/);
    const stateColumn = (lines[0] as string).indexOf("state");
    expect((lines[1] as string).slice(stateColumn, stateColumn + 7)).toBe("applied");
    expect((lines[2] as string).slice(stateColumn, stateColumn + 7)).toBe("pending");
    expect(lines[1]).toContain("hook");
    // Module URLs are shown as paths, relative to the working directory when that is shorter.
    expect(lines[1]).toMatch(/ {2}\/tl\/numba\.js$/);
    expect(text).toContain("1 problem(s):");
    expect(text).toContain("[pending] Im2Col on jax");
    expect(new AuditLog().format()).toContain("(no registrations)");
    expect(new AuditLog().format()).toContain("ok: every registration landed");
  });

  it("tracks superseded, restored, withdrawn and refused states", () => {
    const registry = createRegistry();
    const table = registry.provide("numba", new Map());
    const first = registry.register("numba", PoolLayer, () => 1);
    registry.register("numba", PoolLayer, () => 2, { override: true });
    expect(registry.verify().registrations.map((r) => r.state)).toEqual(["superseded", "applied"]);
    const snapshot = registry.snapshot();
    first.dispose();
    registry.restore(snapshot);
    expect(registry.verify().registrations.map((r) => r.state)).toEqual(["superseded", "applied"]);
    table.dispose();
    expect(registry.verify().backends).toEqual([{ backend: "numba", tables: 0, sealed: false }]);
    registry.seal("numba");
    expect(() => registry.register("numba", Col2Im, () => 0)).toThrow();
    expect(registry.verify().backends[0]?.sealed).toBe(true);
  });
});

describe("summarizeError", () => {
  it("keeps name, message and code, and copes with non-errors", () => {
    expect(summarizeError(new DispatchHookError("ERR_DISPATCH_SEALED", "sealed"))).toEqual({
      name: "DispatchHookError [ERR_DISPATCH_SEALED]",
      message: "sealed",
      code: "ERR_DISPATCH_SEALED",
    });
    expect(summarizeError("plain")).toEqual({ name: "non-error", message: "plain", code: undefined });
  });
});
