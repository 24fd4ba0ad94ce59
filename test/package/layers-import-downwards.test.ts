import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = fileURLToPath(new URL("../../src", import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
}

describe("layering", () => {
  // The layers, bottom up, and what each may import. No exceptions.
  const layerOf = (file: string): string => {
    const rel = file.slice(src.length + 1);
    if (!rel.includes("/"))
      return ["builtins.ts", "channel.ts", "direct-writes.ts", "host-adapters.ts", "hub.ts", "hub-records.ts", "table-reads.ts"].includes(
        rel,
      )
        ? "base"
        : "entry";
    return rel.split("/")[0] as string;
  };
  const allowed: Record<string, readonly string[]> = {
    base: ["base"],
    runtime: ["base", "runtime"],
    registry: ["base", "registry"],
    hooks: ["base", "runtime", "registry", "hooks"],
    dispatchable: ["base", "registry", "hooks", "dispatchable"],
    cli: ["base", "registry", "hooks", "dispatchable", "cli"],
    entry: ["base", "runtime", "registry", "hooks", "dispatchable", "entry"],
    adapters: ["base", "registry", "hooks", "entry", "adapters"],
  };

  it("no file in src/ is over 300 lines: each is small enough to hold in one sitting", () => {
    const long = files(src)
      .filter((f) => f.endsWith(".ts"))
      .map((f) => [f.slice(src.length + 1), readFileSync(f, "utf8").split("\n").length - 1] as const)
      .filter(([, lines]) => lines > 300);
    expect(long).toEqual([]);
  });

  it("each layer imports only from the layers beneath it, with no exceptions", () => {
    const offenders: string[] = [];
    for (const file of files(src).filter((f) => f.endsWith(".ts"))) {
      const from = layerOf(file);
      for (const [, spec] of readFileSync(file, "utf8").matchAll(/from "(\.[^"]+)"/g)) {
        const target = join(dirname(file), spec as string).replace(/\.js$/, ".ts");
        const to = layerOf(target);
        if (!(allowed[from] ?? []).includes(to)) offenders.push(`${file.slice(src.length + 1)} (${from}) imports ${spec} (${to})`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
