import { describe, expect, it } from "vitest";
import { asImplementation, ImplTable, implLabel, realImpl } from "../../src/dispatchable/impl-table.js";
import { makeTree } from "../integration/fixture.js";

describe("ImplTable", () => {
  it("tells its owner about every change, and only about changes", () => {
    let changes = 0;
    const table = new ImplTable(() => changes++);
    class Op {}
    const impl = () => 1;
    table.register(Op, impl);
    expect(table.get(Op)).toBe(impl);
    table.unregister(Op);
    table.unregister(Op);
    expect(changes).toBe(2);
    expect(table.get(Op)).toBeUndefined();
  });
});

describe("lazy implementations", () => {
  it("load on first use, once, and keep their name for docs", () => {
    const dir = makeTree({ "impl.cjs": "globalThis.lazyLoads = (globalThis.lazyLoads ?? 0) + 1;\nexports.add = (a, b) => a + b;\n" });
    const stub = asImplementation("./impl.cjs#add", dir, "cpu", "add", false);
    if (stub === undefined) throw new Error("unparsed");
    expect((globalThis as { lazyLoads?: number }).lazyLoads).toBeUndefined();
    expect(implLabel(stub)).toBe("./impl.cjs#add");
    expect((stub as unknown as (a: number, b: number) => number)(2, 3)).toBe(5);
    expect(realImpl(stub)).not.toBe(stub);
    realImpl(stub);
    expect((globalThis as { lazyLoads?: number }).lazyLoads).toBe(1);
  });

  it("fail with ERR_DISPATCH_IMPL_LOAD naming the backend and the function", () => {
    const dir = makeTree({ "impl.cjs": "exports.notAFunction = 3;\n", "inner.cjs": 'require("./gone.cjs");\n' });
    const missing = asImplementation("./nowhere.cjs#add", dir, "gpu", "add", false) as never;
    expect(() => realImpl(missing)).toThrow(
      expect.objectContaining({
        code: "ERR_DISPATCH_IMPL_LOAD",
        message: expect.stringMatching(/Backend "gpu" .* implementation of add, but "\.\/nowhere\.cjs" does not resolve/),
      }),
    );
    const wrong = asImplementation("./impl.cjs#notAFunction", dir, "gpu", "mul", false) as never;
    expect(() => realImpl(wrong)).toThrow(/its export "notAFunction" is number 3, not a function/);
    // A module that resolves but whose own import does not: its loading failed, it is not the one missing.
    const inner = asImplementation("./inner.cjs#add", dir, "gpu", "add", false) as never;
    expect(() => realImpl(inner)).toThrow(/but loading "\.\/inner\.cjs" failed: Cannot find module '\.\/gone\.cjs'/);
    expect(asImplementation("nohash", dir, "gpu", "mul", false)).toBeUndefined();
  });
});
