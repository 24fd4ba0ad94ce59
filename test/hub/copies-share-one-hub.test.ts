/**
 * The hub: one meeting point per thread and realm, found with one handshake. These tests speak the
 * handshake by hand, as another copy of the package (of another version) would.
 */

import { execFileSync } from "node:child_process";
import diagnosticsChannel from "node:diagnostics_channel";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type HubApi, type HubMember, type HubRequest, hubChannelName, summarizeError } from "../../src/channel.js";
import { hub } from "../../src/hub.js";
import { DispatchHookError } from "../../src/registry/errors.js";
import { createRegistry } from "../../src/registry/registry.js";
import { collect, tablesOf } from "../helpers.js";

const channel = diagnosticsChannel.channel(hubChannelName);

function ask(fields: Partial<HubRequest> & Record<string, unknown>): { hub?: HubApi } {
  const request = { kind: "dispatch-hook:hub", version: 1, accepts: [1], realm: globalThis, ...fields };
  channel.publish(request);
  return request as { hub?: HubApi };
}

function member(namespace: string, seen: string[]): HubMember {
  return {
    namespace,
    name: namespace,
    copy: "test",
    table: (notice) => seen.push(`${notice.namespace}:${notice.backend}`),
    miss: () => {},
    wrote: () => false,
    events: () => [],
  };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the hub handshake", () => {
  it("gives every copy that asks from this realm the same hub, and a copy of a newer version too", () => {
    const mine = hub();
    expect(ask({}).hub).toBe(mine);
    // A newer copy names the versions it can use; the hub answers when it speaks one of them.
    expect(ask({ version: 2, accepts: [2, 1] }).hub).toBe(mine);
    // Another realm (a vm context of a test runner) has a hub of its own.
    expect(ask({ realm: {} }).hub).toBeUndefined();
  });

  it("refuses a copy that speaks no version it knows, and a malformed handshake, with a warning and a code", () => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    expect(ask({ version: 99, accepts: [99] }).hub).toBeUndefined();
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("speaks hub version 99"), { code: "DISPATCH_HOOK_HUB_VERSION" });
    channel.publish({ hello: "world" });
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("not a dispatch-hook hub handshake"), {
      code: "DISPATCH_HOOK_HUB_HANDSHAKE",
    });
    // Nothing already registered is lost.
    const registry = createRegistry();
    class Kept {}
    registry.register("refusal", Kept, () => 1);
    const table = new Map();
    registry.provide("refusal", table);
    channel.publish({ kind: "dispatch-hook:hub", accepts: "all" });
    expect(table.has(Kept)).toBe(true);
    registry.dispose();
  });
});

describe("the hub", () => {
  it("tells a table only to the members listening for its namespace and backend", () => {
    const seen: string[] = [];
    const framework = member("dispatch", seen);
    const own = member("backends:test", seen);
    hub().listen(framework, "hub-numba");
    hub().listen(own, "hub-numba");
    hub().announce({ via: "native", namespace: "dispatch", backend: "hub-numba", module: undefined, table: new Map() });
    hub().announce({ via: "native", namespace: "backends:test", backend: "hub-numba", module: undefined, table: new Map() });
    hub().announce({ via: "native", namespace: "dispatch", backend: "hub-jax", module: undefined, table: new Map() });
    expect(seen).toEqual(["dispatch:hub-numba", "backends:test:hub-numba"]);
    hub().leave(framework);
    hub().leave(own);
  });

  it("keeps one table per module and export: a newer instance retires the older, announcing the same one again is a no-op", () => {
    const first = { t: new Map() };
    const second = { t: new Map() };
    const at = (exports: object) =>
      ({ via: "hook", namespace: "dispatch", backend: "hub-once", module: "file:///once.js", exports, exportName: "t" }) as const;
    hub().announce(at(first));
    hub().announce(at(first));
    expect(tablesOf("hub-once").map((n) => (n.via === "hook" ? n.exports : undefined))).toEqual([first]);
    hub().announce(at(second));
    expect(tablesOf("hub-once").map((n) => (n.via === "hook" ? n.exports : undefined))).toEqual([second]);
  });

  it("holds tables and members weakly, and a member strongly only while told to", async () => {
    const seen: string[] = [];
    let kept: HubMember | undefined = member("dispatch", seen);
    let dropped: HubMember | undefined = member("dispatch", seen);
    hub().listen(kept, "hub-weak");
    hub().listen(dropped, "hub-weak");
    hub().hold(kept, true);
    const gone = new FinalizationRegistry<string>((name) => seen.push(`collected ${name}`));
    gone.register(kept, "kept");
    gone.register(dropped, "dropped");
    let table: object | undefined = new Map();
    gone.register(table, "table");
    hub().announce({ via: "native", namespace: "dispatch", backend: "hub-weak", module: undefined, table });
    kept = undefined;
    dropped = undefined;
    table = undefined;
    await collect(() => seen.includes("collected dropped") && seen.includes("collected table"));
    expect(seen).toContain("collected dropped");
    expect(seen).toContain("collected table");
    expect(seen).not.toContain("collected kept");
    expect(tablesOf("hub-weak")).toEqual([]);
  });

  it("lets dropped registries go, once everything they registered has landed", async () => {
    const before = hub().members().length;
    const table = new Map();
    hub().announce({ via: "native", namespace: "dispatch", backend: "hub-drop", module: undefined, table });
    let collected = 0;
    const gone = new FinalizationRegistry(() => collected++);
    const use = (i: number) => {
      const registry = createRegistry();
      registry.register("hub-drop", class Op {}, () => i);
      gone.register(registry, i);
    };
    for (let i = 0; i < 200; i++) use(i);
    await collect(() => collected === 200);
    expect(collected).toBe(200);
    expect(hub().members().length).toBe(before);
  });

  it("lets a vm realm go (a Jest or Vitest vm-pool test file) once only the thread's channel knows its hub", () => {
    // A child process of its own: V8's coverage (which this suite runs under) keeps every script alive.
    const bundle = fileURLToPath(new URL("../../dist/bundle/index.cjs", import.meta.url));
    const script = [
      'const { readFileSync } = require("node:fs");',
      'const { createRequire } = require("node:module");',
      'const dc = require("node:diagnostics_channel");',
      'const vm = require("node:vm");',
      `const bundle = ${JSON.stringify(bundle)};`,
      "let collected = false;",
      "const gone = new FinalizationRegistry(() => { collected = true; });",
      "(() => {",
      "  const realm = vm.createContext({ process, console });",
      '  const load = vm.runInContext("(function (module, exports, require, __filename) {" + readFileSync(bundle, "utf8") + "\\n})", realm);',
      "  const module = { exports: {} };",
      "  load(module, module.exports, createRequire(bundle), bundle);",
      // The realm's copy finds no hub of its realm, makes one, and subscribes to answer for it.
      '  module.exports.announce("vm-realm", new Map());',
      "  gone.register(realm, 'realm');",
      "})();",
      "(async () => { for (let i = 0; i < 6; i++) { gc(); await new Promise((r) => setTimeout(r, 5)); }",
      '  console.log(JSON.stringify({ subscribed: dc.hasSubscribers("dispatch-hook:hub"), collected })); })();',
    ].join("\n");
    // Empty, not deleted: Node copies its own NODE_V8_COVERAGE into a child's environment that lacks it.
    const env = { ...process.env, NODE_OPTIONS: "", NODE_V8_COVERAGE: "" };
    const out = execFileSync(process.execPath, ["--expose-gc", "-e", script], { encoding: "utf8", env });
    expect(JSON.parse(out)).toEqual({ subscribed: true, collected: true });
  });

  it("claims the exit audit once", () => {
    // A fresh process, whose hub nobody has claimed yet (this suite's may have been claimed): the
    // first claim wins, and every later one fails.
    const entry = new URL("../../dist/hub.js", import.meta.url).href;
    const script = `const { hub } = await import(${JSON.stringify(entry)}); console.log(JSON.stringify([hub().claimExit(), hub().claimExit(), hub().claimExit()]));`;
    const env = { ...process.env, NODE_OPTIONS: "", NODE_V8_COVERAGE: "" };
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", env });
    expect(JSON.parse(out)).toEqual([true, false, false]);
    // In this thread too, once claimed, it stays claimed.
    hub().claimExit();
    expect(hub().claimExit()).toBe(false);
  });
});

describe("summarizeError", () => {
  it("keeps name, message and code, and copes with non-errors", () => {
    expect(summarizeError(new DispatchHookError("ERR_DISPATCH_SEALED", "sealed"))).toEqual({
      name: "DispatchHookError [ERR_DISPATCH_SEALED]",
      message: "sealed",
      code: "ERR_DISPATCH_SEALED",
    });
    expect(summarizeError(Object.assign(new Error("x"), { code: 7 }))).toEqual({ name: "Error", message: "x", code: undefined });
    expect(summarizeError("plain")).toEqual({ name: "non-error", message: "plain", code: undefined });
  });
});
