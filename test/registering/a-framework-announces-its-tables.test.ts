import { describe, expect, it, vi } from "vitest";
import { announce } from "../../src/announce.js";
import { hub } from "../../src/hub.js";
import { Dispatcher } from "../../src/registry/dispatcher.js";
import { createRegistry } from "../../src/registry/registry.js";
import { tablesOf, thrown } from "../helpers.js";

class Op {}

describe("announce (the framework-native route)", () => {
  it("reaches registries waiting now and registries created later", () => {
    const waiting = createRegistry();
    waiting.register("native-a", Op, () => "now");
    const table = new Dispatcher({ backend: "native-a" });
    announce("native-a", table, { module: "file:///fw/native.js" });
    expect(table.resolve(new Op())()).toBe("now");
    expect(tablesOf("native-a")).toEqual([
      { via: "native", namespace: "dispatch", backend: "native-a", table, module: "file:///fw/native.js" },
    ]);
    waiting.dispose();
    const later = createRegistry();
    class Late {}
    later.register("native-a", Late, () => "later");
    expect(later.verify().registrations[0]?.state).toBe("applied");
    // Applied to the table provided before this registry existed.
    expect(table.resolve(new Late())()).toBe("later");
    expect(
      hub()
        .allTables()
        .some((n) => n.via === "native" && n.table === table),
    ).toBe(true);
    later.dispose();
  });

  it("a table of another namespace reaches only registries of that namespace", () => {
    const framework = createRegistry();
    const own = createRegistry({ namespace: "mine" });
    class Shared {}
    framework.register("ns-a", Shared, () => "framework's");
    own.register("ns-a", Shared, () => "mine");
    const theirs = new Map();
    const mine = new Map();
    announce("ns-a", theirs);
    announce("ns-a", mine, { namespace: "mine" });
    expect(theirs.get(Shared)?.()).toBe("framework's");
    expect(mine.get(Shared)?.()).toBe("mine");
    framework.dispose();
    own.dispose();
  });

  it("a table no registry can use: a warning with its code for each such table, and its registrations wait", () => {
    const waiting = createRegistry();
    waiting.register("native-bad", Op, () => "x");
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    try {
      announce("native-bad", { notATable: true });
      announce("native-bad", { another: true });
      const codes = warn.mock.calls.map((c) => (c[1] as { code?: string } | undefined)?.code);
      expect(codes.filter((c) => c === "DISPATCH_HOOK_TABLE_REJECTED")).toHaveLength(2);
      expect(waiting.pending("native-bad")).toHaveLength(1);
    } finally {
      warn.mockRestore();
      waiting.dispose();
    }
  });

  it("refuses bad input with a code and announces nothing", () => {
    const before = hub().allTables().length;
    expect(thrown(() => announce("", {})).code).toBe("ERR_DISPATCH_INVALID_BACKEND");
    expect(thrown(() => announce("my backend", {})).code).toBe("ERR_DISPATCH_INVALID_BACKEND");
    expect(thrown(() => announce("x", null as never)).code).toBe("ERR_DISPATCH_TABLE_SHAPE");
    expect(thrown(() => announce("x", {}, { modul: "y" } as never)).message).toContain('did you mean "module"');
    expect(hub().allTables().length).toBe(before);
  });
});

describe("the tables of a module's instances (the hook route)", () => {
  const hookNotice = (module: string, exportName: string, exports: object) =>
    ({ via: "hook", namespace: "dispatch", backend: "inst", module, exports, exportName, host: undefined }) as const;
  const live = () =>
    hub()
      .allTables()
      .filter((n) => n.via === "hook" && n.backend === "inst")
      .map((n) => (n.via === "hook" ? `${n.module.slice(-3)} ${n.exportName}` : ""));

  it("a module with two exported tables keeps both; a newer instance of the module replaces each export's older table", () => {
    const first = { a: new Map(), b: new Map() };
    hub().announce(hookNotice("file:///fw/two.js", "a", first));
    hub().announce(hookNotice("file:///fw/two.js", "b", first));
    expect(live().sort()).toEqual([".js a", ".js b"]);
    // The same module evaluated again (a test runner's fresh module registry): the second export first.
    const second = { a: new Map(), b: new Map() };
    hub().announce(hookNotice("file:///fw/two.js", "b", second));
    expect(live().sort()).toEqual([".js a", ".js b"]);
    hub().announce(hookNotice("file:///fw/two.js", "a", second));
    expect(live().sort()).toEqual([".js a", ".js b"]);
    const namespaces = hub()
      .allTables()
      .flatMap((n) => (n.via === "hook" && n.backend === "inst" ? [n.exports] : []));
    expect(namespaces.every((ns) => ns === second)).toBe(true);
    // Announcing the same namespace again changes nothing.
    hub().announce(hookNotice("file:///fw/two.js", "a", second));
    expect(live()).toHaveLength(2);
  });

  it("instances at URLs with a query (?v=1, ?v=2) are tables of their own", () => {
    const one = { t: new Map() };
    const two = { t: new Map() };
    hub().announce(hookNotice("file:///fw/q.js?v=1", "t", one));
    hub().announce(hookNotice("file:///fw/q.js?v=2", "t", two));
    expect(live().filter((l) => l.endsWith(" t"))).toEqual(["v=1 t", "v=2 t"]);
  });
});
