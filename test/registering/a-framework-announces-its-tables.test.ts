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
