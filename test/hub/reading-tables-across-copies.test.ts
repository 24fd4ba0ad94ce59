import { describe, expect, it } from "vitest";
import { dispatcherBrand } from "../../src/channel.js";
import { Dispatcher } from "../../src/registry/dispatcher.js";
import { exportOf, keyName, listEntries, noticeTable } from "../../src/table-reads.js";

class Conv {}

describe("listEntries", () => {
  it("lists a Dispatcher's and a Map's entries, live, and nothing else", () => {
    const table = new Dispatcher({ backend: "cpu" });
    const entries = listEntries(table);
    table.register(Conv, () => 1);
    expect([...(entries?.keys() ?? [])]).toEqual([Conv]);
    const map = new Map([[Conv, 1]]);
    expect(listEntries(map)).toBe(map);
    expect(listEntries({ register() {} })).toBeUndefined();
    expect(listEntries(null)).toBeUndefined();
    // A Dispatcher of another copy is recognised by its brand.
    const foreign = { [dispatcherBrand]: true, entries: new Map([[Conv, 2]]) };
    expect(listEntries(foreign)?.get(Conv)).toBe(2);
    expect(listEntries({ [dispatcherBrand]: true, entries: 5 })).toBeUndefined();
  });
});

describe("noticeTable and keyName", () => {
  it("find a notice's table in a namespace or as given", () => {
    const table = new Map();
    expect(noticeTable({ via: "native", namespace: "dispatch", backend: "cpu", module: undefined, table })).toBe(table);
    expect(
      noticeTable({
        via: "hook",
        namespace: "dispatch",
        backend: "cpu",
        module: "file:///t.js",
        exports: { cpuTable: table },
        exportName: "cpuTable",
      }),
    ).toBe(table);
    expect(
      noticeTable({
        via: "hook",
        namespace: "dispatch",
        backend: "cpu",
        module: "file:///t.js",
        exports: undefined,
        exportName: "cpuTable",
      }),
    ).toBeUndefined();
    expect(keyName(Conv)).toBe("Conv");
    expect(keyName((() => class {})())).toBe("(anonymous class)");
  });

  it("keyName: a class by its name, a string as itself, any other key names no op", () => {
    expect(keyName(Conv)).toBe("Conv");
    expect(keyName("Conv")).toBe("Conv");
    expect(keyName(Symbol("Conv"))).toBeUndefined();
    expect(keyName(3)).toBeUndefined();
    expect(keyName(undefined)).toBeUndefined();
  });
});

describe("exportOf", () => {
  it('reads a named export; "default" of a CommonJS module that is itself a table is that table, and of nothing else', async () => {
    const table = new Dispatcher({ backend: "cpu" });
    expect(exportOf({ table }, "table")).toBe(table);
    expect(exportOf(table, "default")).toBe(table);
    const map = new Map();
    expect(exportOf(map, "default")).toBe(map);
    // Its own default wins; a compiled ES module (__esModule), a module namespace and an object that is no table are not tables.
    expect(exportOf({ default: table, register() {} }, "default")).toBe(table);
    expect(exportOf({ __esModule: true, register() {} }, "default")).toBeUndefined();
    expect(exportOf(await import("../../src/table-reads.js"), "default")).toBeUndefined();
    expect(exportOf({ table }, "default")).toBeUndefined();
    expect(exportOf(table, "tabel")).toBeUndefined();
    expect(exportOf(undefined, "default")).toBeUndefined();
  });
});
