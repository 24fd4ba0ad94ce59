import { parse } from "acorn";
import { describe, expect, it } from "vitest";
import { enterOnStart } from "../../src/hooks/instrument.js";
import { hub } from "../../src/hub.js";
import { Dispatcher } from "../../src/registry/dispatcher.js";
import { createRegistry } from "../../src/registry/registry.js";
import { requireRegistrations, runRegistration } from "../../src/runtime/required-registrations.js";
import { enter, finish, missingRegistration, signalEvaluated, step } from "../../src/runtime/window.js";
import { byNameAdapter, collect, tablesOf } from "../helpers.js";

class Conv {}
class Pool {}
const module = (url: string) => ({ url, backend: "cpu", exportName: "cpuTable", format: "module" as const });
const info = (id: string) => ({ id, url: `file:///${id}/table.js`, backend: "cpu", plugin: "kit-ops", module: `file:///${id}/reg.js` });
const facts = () => hub().windows();

describe("registration windows", () => {
  it("find what a registration module wrote into the table outside the registry, and what it replaced", () => {
    const table = new Dispatcher({ backend: "cpu" });
    const old = () => "old";
    table.register(Pool, old);
    const namespace = { cpuTable: table };
    const at = module("file:///direct/table.js");
    const registry = createRegistry();
    registry.provide("cpu", table);
    const windows = [info("direct")];
    step(at, namespace, windows, 0);
    expect(facts().find((w) => w.info.id === "direct")?.state).toBe("open");
    table.register(Conv, () => "conv");
    table.register(Pool, () => "new pool");
    // What a registry wrote it says so when asked, and it is not "outside".
    class ByRegistry {}
    registry.register("cpu", ByRegistry, () => "registry");
    step(at, namespace, windows, 1);
    finish(windows);
    const fact = facts().find((w) => w.info.id === "direct");
    expect(fact?.state).toBe("done");
    expect(fact?.outside.map((w) => [w.op, w.replaced])).toEqual([
      ["Pool", true],
      ["Conv", false],
    ]);
    // A second route to the same load opens nothing new.
    step(at, namespace, windows, 0);
    expect(facts().filter((w) => w.info.id === "direct")).toHaveLength(1);
    registry.dispose();
  });

  it("a window still in its synchronous part once the current job is over did not finish: its module threw", async () => {
    const table = new Map();
    step(module("file:///threw/table.js"), { cpuTable: table }, [info("threw")], 0);
    await Promise.resolve();
    expect(facts().find((w) => w.info.id === "threw")?.state).toBe("failed");
  });

  it("stays current for a registration module's code after a top-level await, and only for it", async () => {
    const registry = createRegistry();
    const table = new Map();
    const at = module("file:///tla/table.js");
    const windows = [info("tla")];
    let resume = () => {};
    step(at, { cpuTable: table }, windows, 0);
    // The module's body: it suspends at an await; what follows runs in its window.
    const body = (async () => {
      await new Promise<void>((go) => {
        resume = go;
      });
      registry.register("cpu", Conv, () => "conv");
      table.set(Pool, "written directly");
    })();
    step(at, { cpuTable: table }, windows, 1);
    expect(facts().find((w) => w.info.id === "tla")?.state).toBe("awaiting");
    // The app's own code, which runs while the plugin waits, is not the plugin's.
    expect(hub().currentWindow()).toBeUndefined();
    class Mine {}
    registry.register("cpu", Mine, () => "mine");
    resume();
    await body;
    finish(windows);
    const origins = registry.verify().registrations.map((r) => [r.op, r.origin?.plugin]);
    expect(origins).toEqual([
      ["Mine", undefined],
      ["Conv", "kit-ops"],
    ]);
    expect(facts().find((w) => w.info.id === "tla")).toMatchObject({ state: "done", outside: [{ op: "Pool", replaced: false }] });
    registry.dispose();
  });

  it("records a registration module that could not be loaded, and contains a throw on the require() route", () => {
    const table = new Map();
    missingRegistration(info("missing"), module("file:///missing/table.js"), { cpuTable: table }, "Cannot find it");
    expect(facts().find((w) => w.info.id === "missing")).toMatchObject({
      state: "missing",
      error: { message: "Cannot find it", code: "ERR_DISPATCH_REGISTRATION_MODULE" },
    });
    runRegistration(info("throws"), module("file:///throws/table.js"), { cpuTable: table }, () => {
      throw new TypeError("plugin bug");
    });
    expect(facts().find((w) => w.info.id === "throws")).toMatchObject({
      state: "failed",
      error: { name: "TypeError", message: "plugin bug" },
    });
    runRegistration(info("fine"), module("file:///fine/table.js"), { cpuTable: table }, () => table.set(Conv, 1));
    expect(facts().find((w) => w.info.id === "fine")).toMatchObject({ state: "done", outside: [{ op: "Conv", replaced: false }] });
  });

  it("a table keyed by op name: a string key written directly is the op of that name; a key that names no op is not reported", () => {
    const table = new Map<unknown, unknown>([["Relu", "old"]]);
    runRegistration(info("by-name"), module("file:///by-name/table.js"), { cpuTable: table }, () => {
      table.set("Conv", 1);
      table.set("Relu", "new");
      table.set(Symbol("Pool"), 2);
      table.set(42, 3);
    });
    expect(facts().find((w) => w.info.id === "by-name")?.outside).toEqual([
      { op: "Relu", opType: "Relu", replaced: true },
      { op: "Conv", opType: "Conv", replaced: false },
    ]);
  });

  it("a registry that writes under the op's name (its adapter's choice) wrote it: not outside", () => {
    const registry = createRegistry();
    const table = new Map<unknown, unknown>();
    registry.declare("named", { adapter: byNameAdapter });
    registry.provide("named", table);
    const named = { url: "file:///named/table.js", backend: "named", exportName: "namedTable", format: "module" as const };
    runRegistration({ ...info("named"), backend: "named" }, named, { namedTable: table }, () => {
      registry.register("named", Conv, () => "conv");
      table.set("Pool", () => "pool");
    });
    expect(table.has("Conv")).toBe(true);
    expect(
      facts()
        .find((w) => w.info.id === "named")
        ?.outside.map((w) => w.op),
    ).toEqual(["Pool"]);
    registry.dispose();
  });

  it("keeps no table alive: a window goes with its table, and a new instance of the same URL gets a window of its own", async () => {
    let loads = 0;
    const gone = new FinalizationRegistry<string>((what) => {
      if (what === "table") loads += 100;
    });
    (() => {
      const table = new Map();
      gone.register(table, "table");
      runRegistration(info("reload"), module("file:///reload/table.js"), { cpuTable: table }, () => {
        loads++;
        table.set(Conv, 1);
      });
    })();
    // The same URL again (require.cache emptied, a test runner's module reset): its module runs again.
    const again = new Map();
    runRegistration(info("reload"), module("file:///reload/table.js"), { cpuTable: again }, () => {
      loads++;
      again.set(Pool, 2);
    });
    expect(loads).toBe(2);
    expect(
      facts()
        .find((w) => w.info.id === "reload")
        ?.outside.map((w) => w.op),
    ).toEqual(["Pool"]);
    await collect(() => loads === 102);
    expect(loads).toBe(102);
    expect(facts().filter((w) => w.info.id === "reload")).toHaveLength(1);
  });

  it("a registration module that imports another watched module keeps its window after that module's steps", () => {
    const outer = [info("outer")];
    const inner = [{ ...info("inner"), plugin: "other-ops" }];
    const outerModule = module("file:///outer/table.js");
    const innerModule = module("file:///inner/table.js");
    step(outerModule, { cpuTable: new Map() }, outer, 0);
    expect(hub().currentWindow()?.id).toBe("outer");
    // Its registration module imports a dispatch module with a plugin of its own: that instance's steps.
    step(innerModule, { cpuTable: new Map() }, inner, 0);
    expect(hub().currentWindow()?.id).toBe("inner");
    finish(inner);
    step(innerModule, { cpuTable: new Map() }, inner, 1);
    expect(hub().currentWindow()?.id).toBe("outer");
    finish(outer);
    step(outerModule, { cpuTable: new Map() }, outer, 1);
    expect(hub().currentWindow()).toBeUndefined();
  });
});

describe("signalEvaluated", () => {
  it("tells registries waiting for the backend now, and answers for the table later", () => {
    const registry = createRegistry();
    class Gpu {}
    registry.register("gpu", Gpu, () => "gpu");
    const namespace = { gpuTable: new Map() };
    signalEvaluated({ url: "file:///gpu.js", backend: "gpu", exportName: "gpuTable" }, namespace);
    expect(namespace.gpuTable.get(Gpu)?.()).toBe("gpu");
    expect(tablesOf("gpu")).toEqual([
      {
        via: "hook",
        namespace: "dispatch",
        backend: "gpu",
        module: "file:///gpu.js",
        exports: namespace,
        exportName: "gpuTable",
        host: undefined,
      },
    ]);
    registry.dispose();
  });
});

const rrModule = { url: "file:///rr/table.cjs", backend: "cpu", exportName: "cpuTable", format: "commonjs" as const };
const rrWindow = (name: string) => ({
  id: `rr ${name}`,
  url: rrModule.url,
  backend: "cpu",
  plugin: name,
  module: `file:///rr/${name}.cjs`,
});

describe("requireRegistrations", () => {
  it("loads each in order, each in its window; a missing one and a throwing one are recorded, and the rest still run", () => {
    const loaded: string[] = [];
    const exports = { cpuTable: new Map() };
    requireRegistrations(
      rrModule,
      exports,
      (id) => {
        loaded.push(id);
        if (id === "/rr/throws.cjs") throw new Error("broken plugin");
        return {};
      },
      [
        { window: rrWindow("first"), path: "/rr/first.cjs" },
        { window: rrWindow("gone"), path: "/rr/gone.cjs", missing: "Cannot find /rr/gone.cjs" },
        { window: rrWindow("throws"), path: "/rr/throws.cjs" },
        { window: rrWindow("last"), path: "/rr/last.cjs" },
      ],
    );
    expect(loaded).toEqual(["/rr/first.cjs", "/rr/throws.cjs", "/rr/last.cjs"]);
    const states = Object.fromEntries(
      facts()
        .filter((w) => w.info.id.startsWith("rr "))
        .map((w) => [w.info.plugin, w.state]),
    );
    expect(states).toEqual({ first: "done", gone: "missing", throws: "failed", last: "done" });
  });
});

describe("a registration module says whose window it runs in", () => {
  it("the loader puts one call first in its body, on its first line (after a hashbang), and moves no other line", () => {
    const source = "import { register } from 'dispatch-hook';\nconst __dh0 = 1;\nregister('cpu', A, f);\n";
    const served = enterOnStart(source, "file:///p/reg.js", "file:///dist/bundle/runtime.js");
    expect(served.split("\n").slice(1)).toEqual(source.split("\n").slice(1));
    expect(served.split("\n")[0]).toBe(
      `import{enter as __dh1}from"file:///dist/bundle/runtime.js";__dh1("file:///p/reg.js");import { register } from 'dispatch-hook';`,
    );
    parse(served, { ecmaVersion: "latest", sourceType: "module" });
    const hashbang = enterOnStart("#!/usr/bin/env node\nregister();\n", "file:///p/reg.js", "r.js");
    expect(hashbang.split("\n")).toEqual([
      "#!/usr/bin/env node",
      'import{enter as __dh0}from"r.js";__dh0("file:///p/reg.js");register();',
      "",
    ]);
    expect(enterOnStart("#!/usr/bin/env node", "file:///p/reg.js", "r.js")).toBe("#!/usr/bin/env node");
  });

  it("enter(): code run in another window's context is the registration module's own window's", () => {
    const registry = createRegistry();
    const table = new Dispatcher({ backend: "cpu" });
    const ns = { cpuTable: table };
    const windows = [info("own-a"), info("own-b")].map((w) => ({ ...w, url: "file:///own/table.js" }));
    step(module("file:///own/table.js"), ns, windows, 0);
    registry.register("cpu", Conv, () => "a");
    // Module b's body, run while a's window is current (a imports it, or they share what awaited):
    enter("file:///own-b/reg.js");
    registry.register("cpu", Pool, () => "b");
    enter("file:///own-a/reg.js");
    step(module("file:///own/table.js"), ns, windows, 1);
    step(module("file:///own/table.js"), ns, windows, 2);
    finish(windows);
    expect(registry.verify().registrations.map((r) => [r.op, r.origin?.module])).toEqual([
      ["Conv", "file:///own-a/reg.js"],
      ["Pool", "file:///own-b/reg.js"],
    ]);
    registry.dispose();
  });
});
