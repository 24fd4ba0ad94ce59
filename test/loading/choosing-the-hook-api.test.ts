import { describe, expect, it } from "vitest";
import { hookMode } from "../../src/hooks/hook-mode.js";

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
