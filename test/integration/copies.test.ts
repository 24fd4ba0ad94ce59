/**
 * Two installed copies of dispatch-hook in one thread, end to end: the app and the framework use the
 * top-level copy (node_modules/dispatch-hook, loaded with --import <top copy>/loader.mjs), and a
 * plugin registers through a nested copy of its own (node_modules/some-plugin/node_modules/
 * dispatch-hook: real files, so its own module instances). Whichever copy's module is evaluated
 * first makes the thread's hub, so every case runs in both orders. The nested copy is the same
 * version, a newer one (hub version 2, still speaking 1), or an unknown future one (99 only), made by
 * patching the handshake in its built files.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ProcessRecord } from "../../src/registry/run-records.js";
import { appJson, lastJson, makeTree, repoRoot, run } from "./fixture.js";
import { frameworkEsm } from "./trees.js";

const nestedAt = "node_modules/some-plugin/node_modules/dispatch-hook";

interface Handshake {
  /** What the copy asks with. */
  readonly version: number;
  readonly accepts: readonly number[];
  /** What its hub answers to. */
  readonly versions: readonly number[];
}

/**
 * The handshake in the built files, as esbuild and tsc emit src/channel.ts and src/hub.ts, spaced
 * or minified and broken into short lines (the loader's own bundles are): the request names the version and accepted versions
 * by variable, the accepted list is built from the version, and the hub's list holds it.
 */
const askPattern = /kind:\s*"dispatch-hook:hub",\s*version:\s*([\w$]+),\s*accepts:\s*([\w$]+)/g;
const hubPattern = /\bversions\s*=\s*\[\s*([\w$]+)\s*\]/g;
const literal = (name: string) => name.replace(/\$/g, "\\$");

/** Replaces the one match of `pattern` in `text`; anything but exactly one fails, naming `what`. */
function replaceOnce(text: string, pattern: RegExp, what: string, make: (match: RegExpExecArray) => string): string {
  const matches = [...text.matchAll(new RegExp(pattern.source, "g"))];
  if (matches.length !== 1) throw new Error(`${what} is there ${matches.length} times, not once`);
  const match = matches[0] as RegExpExecArray;
  return text.slice(0, match.index) + make(match) + text.slice(match.index + match[0].length);
}

/**
 * Makes a copy speak another hub version: every built file that asks (it builds the request) or
 * answers (it holds the Hub class) is rewritten, and any that does not hold the expected text fails
 * here, so a change in the build cannot leave the copy speaking version 1 unnoticed. The asker
 * takes an answering hub that speaks any version it accepts.
 */
function patchHandshake(copy: string, to: Handshake): void {
  const patched: string[] = [];
  for (const file of readdirSync(join(copy, "dist"), { recursive: true, encoding: "utf8" })) {
    if (!/\.c?js$/.test(file)) continue;
    const path = join(copy, "dist", file);
    let text = readFileSync(path, "utf8");
    const asks = new RegExp(askPattern.source).exec(text);
    const answers = /\bclass Hub\b|\bHub = class\b|\bversions\s*=\s*\[/.test(text);
    if (asks === null && !answers) continue;
    if (asks !== null) {
      const [, version, accepts] = asks as unknown as [string, string, string];
      text = replaceOnce(text, askPattern, `${file}: the handshake request`, (m) =>
        m[0].replace(/version:\s*[\w$]+/, `version: ${to.version}`),
      );
      const acceptsPattern = new RegExp(`\\b${literal(accepts)}\\s*=\\s*\\[\\s*${literal(version)}\\s*\\]`);
      text = replaceOnce(text, acceptsPattern, `${file}: the accepted versions`, () => `${accepts} = ${JSON.stringify(to.accepts)}`);
    }
    if (answers) text = replaceOnce(text, hubPattern, `${file}: the hub's versions`, () => `versions = ${JSON.stringify(to.versions)}`);
    writeFileSync(path, text);
    patched.push(file);
  }
  // The entry points the plugin and the app load must be among them.
  for (const entry of ["bundle/index.js", "bundle/index.cjs", "bundle/install.js", "bundle/runtime.js", "channel.js", "hub.js"]) {
    if (!patched.includes(entry)) throw new Error(`dist/${entry} holds no handshake to patch; patched: ${patched.join(", ")}`);
  }
}

/** plugin.mjs: loads the plugin's registration module, noting whether a hub existed before it. */
const pluginFirst = [
  'import dc from "node:diagnostics_channel";',
  'const before = dc.hasSubscribers("dispatch-hook:hub");',
  'await import("some-plugin/register.js");',
  'export const hub = { before, after: dc.hasSubscribers("dispatch-hook:hub") };',
].join("\n");

/**
 * main.mjs: the app registers Relu through the top copy, loads the framework's numba table, calls
 * what both copies registered, misses on a cuda table, and prints both copies' thread audits. A
 * handshake that accepts every version tells which hub answers first (the first one made).
 */
const main = [
  'import dc from "node:diagnostics_channel";',
  'import { hub } from "./plugin.mjs";',
  'import * as top from "dispatch-hook";',
  'import * as nested from "some-plugin/copy.js";',
  'import { Conv, PoolLayer } from "some-plugin/ops.js";',
  "class Relu {}",
  'top.register("numba", Relu, () => "relu from the top copy");',
  'const { numbaFuncify } = await import("tensorlab/link/numba/dispatch/basic.js");',
  "const call = (table, value) => { try { return table.resolve(value)(); } catch (e) { return e.code; } };",
  "let miss;",
  // A cuda table the loader never watched: kept alive, so that every audit below sees it.
  'const cuda = new top.Dispatcher({ name: "cudaFuncify", backend: "cuda" });',
  "try { cuda.resolve(new Conv()); } catch (e) { miss = e.message; }",
  'const probe = { kind: "dispatch-hook:hub", version: 1, accepts: [1, 2, 99], realm: globalThis };',
  'dc.channel("dispatch-hook:hub").publish(probe);',
  "const audit = (a) => ({ ok: a.ok, registrations: a.registrations.map((r) => r.op + ' on ' + r.backend + ': ' + r.state + ' ' + r.registry).sort() });",
  "console.log(JSON.stringify({",
  "  hub: { ...hub, versions: probe.hub?.versions },",
  "  copies: top.registry !== nested.registry,",
  "  pool: call(numbaFuncify, new PoolLayer()),",
  "  relu: call(numbaFuncify, new Relu()),",
  "  miss,",
  "  top: audit(top.threadAudit()),",
  "  nested: audit(nested.threadAudit()),",
  "  cuda: cuda.name,",
  "}));",
].join("\n");

/** The app, tensorlab and some-plugin, with the nested copy patched to `handshake` if given. */
function copiesTree(handshake?: Handshake): { dir: string; label: (text: string) => string } {
  const dir = realpathSync(
    makeTree({
      ...frameworkEsm,
      "node_modules/dispatch-hook": { symlink: "<repo>" },
      "node_modules/some-plugin/package.json": JSON.stringify({
        name: "some-plugin",
        type: "module",
        exports: { "./*": "./*" },
        dependencies: { "dispatch-hook": "*" },
      }),
      "node_modules/some-plugin/ops.js": "export class PoolLayer {}\nexport class Conv {}\n",
      "node_modules/some-plugin/register.js": [
        'import { register } from "dispatch-hook";',
        'import { Conv, PoolLayer } from "./ops.js";',
        'register("numba", PoolLayer, () => "pool from the nested copy");',
        'register("cuda", Conv, () => "conv on cuda");',
        "",
      ].join("\n"),
      "node_modules/some-plugin/copy.js": 'export { registry, threadAudit } from "dispatch-hook";\n',
      "package.json": appJson({ type: "module", dependencies: { tensorlab: "*", "some-plugin": "*", "dispatch-hook": "*" } }),
      "plugin.mjs": pluginFirst,
      "main.mjs": main,
    }),
  );
  const copy = join(dir, nestedAt);
  mkdirSync(copy, { recursive: true });
  for (const entry of ["package.json", "loader.mjs", "dist"]) cpSync(join(repoRoot, entry), join(copy, entry), { recursive: true });
  if (handshake !== undefined) patchHandshake(copy, handshake);
  // Registries are named by their copy's directory: "<top>" and "<nested>" read better.
  const label = (text: string) => text.replaceAll(`(${copy}/)`, "<nested>").replaceAll(`(${repoRoot})`, "<top>");
  return { dir, label };
}

const orders = [
  {
    first: "the nested copy",
    args: (dir: string) => [
      "--import",
      join(dir, "plugin.mjs"),
      "--import",
      join(dir, "node_modules/dispatch-hook/loader.mjs"),
      "main.mjs",
    ],
  },
  { first: "the top copy", args: (dir: string) => ["--import", join(dir, "node_modules/dispatch-hook/loader.mjs"), "main.mjs"] },
] as const;

/** Runs main.mjs in `order`, writing the exit audit to a file, and under the strict exit audit if `strict`. */
async function runApp(dir: string, order: (typeof orders)[number], strict: boolean) {
  const runDir = mkdtempSync(join(dir, "run-"));
  const result = await run(dir, order.args(dir), { DISPATCH_HOOK_AUDIT: strict ? "strict" : undefined, DISPATCH_HOOK_AUDIT_DIR: runDir });
  // One record per hub: one for the thread when the copies share a hub, whichever copy's entry wrote it.
  const exits = () =>
    readdirSync(runDir)
      .filter((name) => name.endsWith(".json"))
      .map((name) => (JSON.parse(readFileSync(join(runDir, name), "utf8")) as ProcessRecord).report);
  const exit = () => {
    const reports = exits();
    expect(reports).toHaveLength(1);
    return reports[0] as ProcessRecord["report"];
  };
  return { ...result, out: lastJson(result.stdout), exit, exits };
}

/** Every registration of both copies, as both thread audits and the exit audit list them. */
const shared = [
  "Conv on cuda: pending default <nested>",
  "PoolLayer on numba: applied default <nested>",
  "Relu on numba: applied default <top>",
];

const versions = [
  { version: "the same version", handshake: undefined, hubs: { "the nested copy": [1], "the top copy": [1] } },
  {
    version: "a newer version (asks with 2, accepts [2, 1]; its hub speaks [1, 2])",
    handshake: { version: 2, accepts: [2, 1], versions: [1, 2] },
    hubs: { "the nested copy": [1, 2], "the top copy": [1] },
  },
] as const;

for (const { version, handshake, hubs } of versions) {
  describe(`a plugin's nested copy of ${version}`, () => {
    for (const order of orders) {
      it(`${order.first} first: the plugin's registration lands in the framework's table, one audit lists both copies, a miss is explained`, async () => {
        const { dir, label } = copiesTree(handshake);
        const result = await runApp(dir, order, true);
        // The plugin's Conv on cuda never reached the cuda table the program dispatched on: every
        // audit says so, whichever copy registered it.
        expect(result.stderr).toContain("[pending] Conv on cuda");
        expect(result.stderr).toContain(
          'a cuda table exists in this thread (Dispatcher "cudaFuncify"), but it never reached dispatch-hook',
        );
        expect(result.stderr.match(/\[pending\]/g)).toHaveLength(1);
        expect(result.code).toBe(1);
        const out = result.out;
        // Who made the hub: nothing before the plugin when the nested copy is first; its versions say whose it is.
        expect(out.hub).toEqual({ before: order.first === "the top copy", after: true, versions: hubs[order.first] });
        expect(out.copies).toBe(true);
        expect(out.pool).toBe("pool from the nested copy");
        expect(out.relu).toBe("relu from the top copy");
        // The top copy's table missed; the nested copy's registry says why.
        expect(out.miss).toContain('No implementation in dispatch table "cudaFuncify" for an instance of Conv.');
        expect(out.miss).toContain("Conv on cuda (registration #1, from node_modules/some-plugin/register.js:4) is pending");
        for (const audit of [out.top, out.nested])
          expect(JSON.parse(label(JSON.stringify(audit)))).toEqual({ ok: false, registrations: shared });
        const exit = result.exit();
        expect(exit.ok).toBe(false);
        expect(exit.registrations.map((r) => label(`${r.op} on ${r.backend}: ${r.state} ${r.registry}`)).sort()).toEqual(shared);
      });
    }
  });
}

describe("a plugin's nested copy of an unknown future version (accepts only [99])", () => {
  for (const order of orders) {
    it(`${order.first} first: a DISPATCH_HOOK_HUB_VERSION warning, the app runs, that copy's registrations stay on its own hub, the top copy's land, and no audit says ok`, async () => {
      const { dir } = copiesTree({ version: 99, accepts: [99], versions: [99] });
      const result = await runApp(dir, order, true);
      expect(result.stderr).toContain("[DISPATCH_HOOK_HUB_VERSION]");
      expect(result.stderr).toContain("it runs on a hub of its own");
      // The hub made first refuses the other copy's request.
      const refused =
        order.first === "the top copy"
          ? "version 99 (accepts [99]) asked for this thread's hub, which speaks [1]"
          : "version 1 (accepts [1]) asked for this thread's hub, which speaks [99]";
      expect(result.stderr).toContain(`A copy of dispatch-hook that speaks hub ${refused}`);
      expect(result.stderr.match(/DISPATCH_HOOK_HUB_VERSION/g)).toHaveLength(1);
      const out = result.out;
      expect(out.hub).toEqual({
        before: order.first === "the top copy",
        after: true,
        versions: order.first === "the top copy" ? [1] : [99],
      });
      expect(out.copies).toBe(true);
      expect(out.pool).toBe("ERR_DISPATCH_NO_IMPL");
      expect(out.relu).toBe("relu from the top copy");
      expect(out.miss).toContain('No implementation in dispatch table "cudaFuncify" for an instance of Conv.');
      // The top copy's hub knows no registry of the other copy, so nothing explains the miss.
      expect(out.miss).not.toContain("Conv on cuda");
      // Each audit sees one copy, so its registries go by their bare names; both say what they cannot see.
      expect(out.top).toEqual({ ok: false, registrations: ["Relu on numba: applied default"] });
      expect(out.nested).toEqual({
        ok: false,
        registrations: ["Conv on cuda: pending default", "PoolLayer on numba: pending default"],
      });
      // Two hubs, two records. The top copy's names the refused copy; the refused copy's holds its own
      // pending registrations. Neither is ok, and strict fails.
      const [top, nested] = [...result.exits()].sort((a, b) => a.registrations.length - b.registrations.length);
      expect(top?.registrations.map((r) => `${r.op} on ${r.backend}: ${r.state}`)).toEqual(["Relu on numba: applied"]);
      expect(top?.problems.map((p) => p.message).join("\n")).toContain("this audit cannot see them");
      expect(top?.ok).toBe(false);
      expect(nested?.registrations.map((r) => `${r.op} on ${r.backend}: ${r.state}`).sort()).toEqual([
        "Conv on cuda: pending",
        "PoolLayer on numba: pending",
      ]);
      expect(nested?.ok).toBe(false);
      expect(result.code).toBe(1);
    });
  }
});

/**
 * Foreign messages on the hub channel, from a program or a tool that is not dispatch-hook. Written
 * from a review: a frozen handshake or one whose fields throw killed the process (the subscriber's
 * throw is rethrown by diagnostics_channel as an uncaught exception), and an answer with the right
 * versions but none of the hub's methods was taken for the hub, so the next register() threw a
 * TypeError with no code.
 */
describe("foreign messages on the hub channel", () => {
  // A registration before the message (this copy's hub answers it) and one after; both must land.
  const app = (publish: string) =>
    [
      'import dc from "node:diagnostics_channel";',
      'const channel = dc.channel("dispatch-hook:hub");',
      'const { register, announce, Dispatcher } = await import("dispatch-hook");',
      "class Conv {}",
      "class Pool {}",
      "const registered = [];",
      'const attempt = (op) => { try { registered.push(register("cpu", op, () => op.name)); } catch (error) { console.log(JSON.stringify({ threw: String(error.code ?? error.message) })); process.exit(3); } };',
      publish.includes("subscribe") ? "" : "attempt(Conv);",
      publish,
      publish.includes("subscribe") ? "attempt(Conv);" : "",
      "attempt(Pool);",
      'const table = new Dispatcher({ name: "t", backend: "cpu" });',
      'announce("cpu", table);',
      "console.log(JSON.stringify({ landed: [table.has(Conv), table.has(Pool)], states: registered.map((r) => r.state) }));",
      "",
    ].join("\n");
  const cases: Record<string, string> = {
    "a frozen handshake of this version":
      'channel.publish(Object.freeze({ kind: "dispatch-hook:hub", version: 1, accepts: [1], realm: globalThis }));',
    "a frozen handshake of an unknown version":
      'channel.publish(Object.freeze({ kind: "dispatch-hook:hub", version: 2, accepts: [2], realm: globalThis }));',
    "a handshake whose kind is a getter that throws": 'channel.publish({ get kind() { throw new Error("no kind"); } });',
    "an answer with the hub's versions but none of its methods, before any copy made the hub":
      'channel.subscribe((message) => { if (message && message.kind === "dispatch-hook:hub") message.hub = { versions: [1], announce() {} }; });',
  };
  for (const [label, publish] of Object.entries(cases)) {
    it(`${label}: the app runs on, a DISPATCH_HOOK_HUB_HANDSHAKE or _VERSION warning, and the registrations made before and after land`, async () => {
      const dir = makeTree({
        "node_modules/dispatch-hook": { symlink: "<repo>" },
        "package.json": appJson({ type: "module", dependencies: { "dispatch-hook": "*" } }),
        "main.mjs": app(publish),
      });
      const result = await run(dir, ["main.mjs"]);
      expect(result.stderr).toMatch(/DISPATCH_HOOK_HUB_(HANDSHAKE|VERSION)/);
      expect(result.stderr).not.toContain("TypeError");
      expect(lastJson(result.stdout)).toEqual({ landed: [true, true], states: ["applied", "applied"] });
      expect(result.code).toBe(0);
    });
  }
});
