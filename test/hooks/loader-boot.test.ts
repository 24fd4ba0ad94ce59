import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { bootInstall } from "../../src/hooks/loader-boot.js";
import { thrown } from "../helpers.js";
import { makeTree } from "../integration/fixture.js";

const saved = process.env.DISPATCH_HOOK_CODE_CACHE;
afterEach(() => {
  if (saved === undefined) delete process.env.DISPATCH_HOOK_CODE_CACHE;
  else process.env.DISPATCH_HOOK_CODE_CACHE = saved;
});

describe("bootInstall", () => {
  it("runs the script with its own URL, and writes the cache when install() says the hooks have settled", () => {
    const root = makeTree({
      "install.script.js": "(function (module, exports, url) { exports.install = (options) => ({ options, url }); })\n",
    });
    const cache = join(root, "cache");
    process.env.DISPATCH_HOOK_CODE_CACHE = cache;
    const script = pathToFileURL(join(root, "install.script.js"));
    const install = bootInstall(script) as unknown as (options: object) => { options: { onSettled: () => void }; url: string };
    const registry = { register() {} };
    const { options, url } = install({ registry });
    expect(url).toBe(script.href);
    expect(options).toMatchObject({ registry });
    expect(existsSync(cache)).toBe(false);
    options.onSettled();
    expect(readdirSync(cache)).toEqual([expect.stringMatching(/^install\.script-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}\.v8cache$/)]);
  });

  it("DISPATCH_HOOK_CODE_CACHE=0: runs the script and writes nothing", () => {
    const root = makeTree({ "install.script.js": "(function (module, exports) { exports.install = (options) => options; })\n" });
    process.env.DISPATCH_HOOK_CODE_CACHE = "0";
    const options = bootInstall(pathToFileURL(join(root, "install.script.js")))({}) as unknown as { onSettled: () => void };
    options.onSettled();
    expect(readdirSync(root)).toEqual(["install.script.js"]);
  });

  it("a script that defines no install() is an error with a code, naming it", () => {
    const root = makeTree({ "install.script.js": "(function (module, exports) { exports.other = 1; })\n" });
    process.env.DISPATCH_HOOK_CODE_CACHE = "0";
    const script = pathToFileURL(join(root, "install.script.js"));
    const error = thrown(() => bootInstall(script));
    expect(error.code).toBe("ERR_DISPATCH_HOOK_DAMAGED");
    expect(error.message).toBe(`${script.href} did not define install(); reinstall dispatch-hook.`);
  });
});
