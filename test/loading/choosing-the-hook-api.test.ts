import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Discovery } from "../../src/hooks/discovery.js";
import { attachHooks, attachInThread, runtimeLocation } from "../../src/hooks/hook-api.js";
import { hookMode } from "../../src/hooks/hook-mode.js";
import { thrown } from "../helpers.js";

// Each row pins one threshold from notes/node-versions.md.
const table: Array<[string, string]> = [
  ["18.20.0", "none"],
  ["20.5.1", "none"],
  ["20.6.0", "none"],
  ["20.15.1", "none"],
  ["20.16.0", "register"],
  ["20.20.2", "register"],
  ["21.7.0", "register"],
  // registerHooks exists from 22.15, but a pass-through hook breaks require(esm) until 22.22.3.
  ["22.14.0", "register"],
  ["22.15.0", "register"],
  ["22.22.0", "register"],
  ["22.22.2", "register"],
  ["22.22.3", "registerHooks"],
  ["22.23.3", "registerHooks"],
  ["23.11.0", "register"],
  ["24.0.0", "register"],
  ["24.11.0", "register"],
  ["24.11.1", "registerHooks"],
  ["v24.21.0", "registerHooks"],
  ["25.2.0", "registerHooks"],
  // Node 26 deprecates module.register (DEP0205): never call it there.
  ["26.10.0", "registerHooks"],
];

describe("hookMode", () => {
  for (const [version, mode] of table) {
    it(`uses ${mode} on Node ${version}`, () => {
      expect(hookMode(version)).toBe(mode);
    });
  }

  it("chooses, on the running Node, an API this Node has", () => {
    const api = process.getBuiltinModule("node:module") as unknown as Record<string, unknown>;
    const mode = hookMode();
    expect(mode === "registerHooks" ? typeof api.registerHooks : mode === "register" ? typeof api.register : "none").toBe(
      mode === "none" ? "none" : "function",
    );
  });
});

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
