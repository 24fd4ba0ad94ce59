import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = fileURLToPath(new URL("../src", import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
}

describe("layering", () => {
  it("registry/ imports nothing from hooks/ but the channel table", () => {
    const offenders: string[] = [];
    for (const file of files(join(src, "registry"))) {
      for (const [, spec] of readFileSync(file, "utf8").matchAll(/from "([^"]+)"/g)) {
        if (spec?.includes("hooks/") && !spec.endsWith("hooks/channel.js")) offenders.push(`${file}: ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("every src file has a test file named after it", () => {
    const missing = files(src)
      .filter((f) => f.endsWith(".ts") && !f.endsWith("index.ts"))
      .map((f) => f.slice(src.length + 1).replace(/\.ts$/, ".test.ts"))
      .filter((t) => {
        try {
          readFileSync(fileURLToPath(new URL(`../test/${t}`, import.meta.url)));
          return false;
        } catch {
          return true;
        }
      });
    expect(missing).toEqual([]);
  });
});
