import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { MessageChannel, receiveMessageOnPort } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { runtimeLocation } from "../../src/hooks/hook-api.js";
import { initialize, load, resolve } from "../../src/hooks/hooks-thread.js";
import { originalUrl } from "../../src/hooks/virtual-modules.js";
import { makeTree } from "../integration/fixture.js";

describe("the hooks-thread entry (module.register)", () => {
  it("passes through until initialized, reports over its port, and stops when disabled", async () => {
    const root = makeTree({
      "package.json": JSON.stringify({
        name: "app",
        dispatchHook: { backends: { numba: { module: "./numba.js", export: "numbaFuncify" } } },
      }),
      "numba.js": "export const numbaFuncify = 1;\n",
    });
    const numba = pathToFileURL(join(root, "numba.js")).href;
    const resolved = { url: numba, format: "module" };
    expect(await resolve(numba, {}, async () => resolved)).toBe(resolved);

    const { port1, port2 } = new MessageChannel();
    const disposed = new Int32Array(new SharedArrayBuffer(4));
    const configured = new Int32Array(new SharedArrayBuffer(4));
    initialize({ discover: { root }, runtime: runtimeLocation(), port: port2, disposed, configured });
    // register() waits for initialize: the config is read after it returns, not in it.
    expect(Atomics.load(configured, 0)).toBe(0);
    expect(receiveMessageOnPort(port1)).toBeUndefined();
    // A hook that runs before then reads it first. Its first report is the config it read, which
    // the installation then has without reading it.
    // No plugin has a registration module for numba: the module keeps its URL, and load() appends the signal.
    expect((await resolve(numba, {}, async () => resolved)).url).toBe(numba);
    expect(Atomics.load(configured, 0)).toBe(1);
    const first = receiveMessageOnPort(port1)?.message as { type: string; config: { rules: unknown[]; files: string[] } };
    expect(first.type).toBe("config");
    expect(first.config.rules).toHaveLength(1);
    expect(first.config.files).toEqual([join(root, "package.json")]);
    const loaded = await load(numba, {}, async () => ({ format: "module", source: "export const numbaFuncify = 1;\n" }));
    expect(String(loaded.source)).toMatch(/^export const numbaFuncify = 1;\n;import\*as __dh0 from/);
    expect(receiveMessageOnPort(port1)?.message).toEqual({ type: "facade", url: numba, backend: "numba", plugins: [] });
    // An original's URL handed out before is still served: it names the module's own URL.
    const original = await load(originalUrl(numba), {}, async () => ({
      format: "module",
      source: "export const numbaFuncify = 1;\n",
    }));
    expect(String(original.source)).toContain(`//# sourceURL=${numba}`);

    // Disposal is seen at once, without waiting for a message.
    Atomics.store(disposed, 0, 1);
    expect(await resolve(numba, {}, async () => resolved)).toBe(resolved);
    port1.close();
  });

  it("reads the config as soon as initialize has returned, and says so through the shared flag", async () => {
    const root = makeTree({ "package.json": JSON.stringify({ name: "app" }) });
    const { port1, port2 } = new MessageChannel();
    const configured = new Int32Array(new SharedArrayBuffer(4));
    initialize({
      discover: { root },
      runtime: runtimeLocation(),
      port: port2,
      disposed: new Int32Array(new SharedArrayBuffer(4)),
      configured,
    });
    expect(Atomics.load(configured, 0)).toBe(0);
    await new Promise((done) => setImmediate(done));
    expect(Atomics.load(configured, 0)).toBe(1);
    expect(receiveMessageOnPort(port1)?.message).toMatchObject({ type: "config", config: { files: [join(root, "package.json")] } });
    port1.close();
  });

  it("a config that cannot be read at all is reported, and every module passes through untouched", async () => {
    const root = makeTree({ "package.json": JSON.stringify({ name: "app" }) });
    const { port1, port2 } = new MessageChannel();
    const configured = new Int32Array(new SharedArrayBuffer(4));
    // A directory that is not a string makes discovery itself throw.
    const discover = { root, inline: [{ field: {}, dir: 5 as unknown as string }] };
    initialize({ discover, runtime: runtimeLocation(), port: port2, disposed: new Int32Array(new SharedArrayBuffer(4)), configured });
    const numba = pathToFileURL(join(root, "numba.js")).href;
    const resolved = { url: numba, format: "module" };
    expect(await resolve(numba, {}, async () => resolved)).toBe(resolved);
    expect(Atomics.load(configured, 0)).toBe(1);
    expect(receiveMessageOnPort(port1)?.message).toMatchObject({ type: "config", config: { rules: [] } });
    expect(receiveMessageOnPort(port1)?.message).toMatchObject({
      type: "failed",
      message: expect.stringMatching(/^its config could not be read \(/),
    });
    port1.close();
  });
});
