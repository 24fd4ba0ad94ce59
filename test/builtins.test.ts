import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { diagnosticsChannel, fs, nodeModule, path, url, workerThreads } from "../src/builtins.js";

const require = createRequire(import.meta.url);

describe("builtins", () => {
  it("are Node's own modules, the very objects require() returns", () => {
    expect(fs).toBe(require("node:fs"));
    expect(path).toBe(require("node:path"));
    expect(url).toBe(require("node:url"));
    expect(nodeModule).toBe(require("node:module"));
    expect(diagnosticsChannel).toBe(require("node:diagnostics_channel"));
    expect(workerThreads()).toBe(require("node:worker_threads"));
  });
});
