import { describe, expect, it } from "vitest";
import { copyDirectory, isDefault, markDefault, registryName } from "../../src/registry/thread-audit.js";
import { repoRoot } from "../integration/fixture.js";

describe("registry identity", () => {
  it("names registries #n unless named, and knows a copy's default", () => {
    const first = registryName(undefined);
    const second = registryName(undefined);
    expect(Number(second.slice(1))).toBe(Number(first.slice(1)) + 1);
    expect(registryName("fixture")).toBe("fixture");
    const registry = {};
    expect(isDefault(registry)).toBe(false);
    expect(markDefault(registry)).toBe(registry);
    expect(isDefault(registry)).toBe(true);
  });

  it("tells the copy by its package directory", () => {
    expect(copyDirectory.replace(/\/$/, "")).toBe(repoRoot.replace(/\/$/, ""));
  });
});
