import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { crypto, diagnosticsChannel, fs, nodeModule, os, path, url, util, workerThreads } from "../../src/builtins.js";

const require = createRequire(import.meta.url);

describe("builtins", () => {
  it("are Node's own modules, the very objects require() returns", () => {
    expect(fs).toBe(require("node:fs"));
    expect(path).toBe(require("node:path"));
    expect(url).toBe(require("node:url"));
    expect(nodeModule).toBe(require("node:module"));
    expect(diagnosticsChannel).toBe(require("node:diagnostics_channel"));
    expect(os()).toBe(require("node:os"));
    expect(crypto()).toBe(require("node:crypto"));
    expect(util()).toBe(require("node:util"));
    expect(workerThreads()).toBe(require("node:worker_threads"));
  });
});
