import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Discovery } from "../../src/hooks/discovery.js";
import { attachHooks, attachInThread, runtimeLocation } from "../../src/hooks/hook-api.js";
import { hookMode } from "../../src/hooks/hook-mode.js";
import { thrown } from "../helpers.js";

describe("runtimeLocation", () => {
  it("finds the runtime bundles that generated code imports and epilogues require", () => {
    const { esm, cjs } = runtimeLocation();
    expect(existsSync(fileURLToPath(esm))).toBe(true);
    expect(existsSync(cjs)).toBe(true);
    expect(cjs.endsWith("runtime.cjs")).toBe(true);
  });
});

describe("attachHooks", () => {
  it.skipIf(hookMode() !== "register")("refuses registerHooks where Node lacks it, with a code, and attaches nothing", () => {
    const discovery = new Discovery({ packages: false });
    expect(thrown(() => attachHooks("registerHooks", discovery, { packages: false }, () => {})).code).toBe("ERR_DISPATCH_HOOK_UNAVAILABLE");
  });
});

describe("attachInThread", () => {
  /** A stand-in for module.registerHooks that keeps the chain as a list. */
  function fakeRegistry() {
    const chain: { resolve?: unknown; load?: unknown }[] = [];
    const registerHooks = (hooks: { resolve?: unknown; load?: unknown }) => {
      chain.push(hooks);
      return { deregister: () => void chain.splice(chain.indexOf(hooks), 1) };
    };
    return { chain, registerHooks, loads: () => chain.filter((h) => h.load !== undefined).length };
  }
  const pair = { resolve: () => ({ url: "file:///x.js" }), load: () => ({ source: "" }) };

  it("attaches load() when asked, once, detaches it when idle, and attaches it again on the next ask", () => {
    const { chain, registerHooks, loads } = fakeRegistry();
    let wiring: { needLoad: () => void; idle: () => void } | undefined;
    const attached = attachInThread(registerHooks, (w) => {
      wiring = w;
      return pair;
    });
    expect(chain).toEqual([{ resolve: pair.resolve }]);
    wiring?.needLoad();
    wiring?.needLoad();
    expect(loads()).toBe(1);
    wiring?.idle();
    expect(loads()).toBe(0);
    wiring?.needLoad();
    expect(chain).toEqual([{ resolve: pair.resolve }, { load: pair.load }]);
    attached.detach();
    expect(chain).toEqual([]);
    // After detach(), nothing attaches again.
    wiring?.needLoad();
    expect(chain).toEqual([]);
  });
});
