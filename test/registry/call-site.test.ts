import { describe, expect, it } from "vitest";
import { captureCallSite, formatCallSite } from "../../src/registry/registration.js";

function registerLike() {
  return captureCallSite(registerLike);
}

describe("call sites", () => {
  it("points at the caller of the named function, relative to the working directory", () => {
    const site = registerLike();
    expect(formatCallSite(site)).toMatch(/^test\/registry\/call-site\.test\.ts:\d+$/);
  });

  it("formats frames of every shape", () => {
    expect(formatCallSite(undefined)).toBe("unknown");
    expect(formatCallSite({})).toBe("unknown");
    expect(formatCallSite({ stack: "Error\n    at /abs/outside/file.js:3:9" })).toBe("/abs/outside/file.js:3");
    expect(formatCallSite({ stack: "Error\n    at fn (node:internal/x:3:9)" })).toBe("node:internal/x:3");
    expect(formatCallSite({ stack: "Error\n    at fn (file:///%zz:3:9)" })).toBe("file:///%zz:3");
    expect(formatCallSite({ stack: "Error\n    at <anonymous>" })).toBe("<anonymous>");
    expect(formatCallSite({ stack: `Error\n    at fn (${process.cwd()}/a.js:7:1)` })).toBe("a.js:7");
  });
});
