// Config discovery with 100, 500 and 2,000 packages installed, 20 of them direct dependencies (4 of
// those declare dispatchHook). The cost must not grow with what is installed: discovery reads only
// the app's package.json and its direct dependencies'.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { discover } from "../dist/hooks/config.js";
import { median } from "./lib.mjs";

const root = join(fileURLToPath(new URL("..", import.meta.url)), ".bench-apps", "discovery");

function makeTree(installed) {
  const dir = join(root, String(installed));
  rmSync(dir, { recursive: true, force: true });
  const direct = Array.from({ length: 20 }, (_, i) => `direct${i}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app", dependencies: Object.fromEntries(direct.map((d) => [d, "*"])) }));
  for (let i = 0; i < installed; i++) {
    const name = i < 20 ? direct[i] : `transitive${i}`;
    const pkg = { name, version: "1.0.0" };
    if (i < 4)
      pkg.dispatchHook =
        i === 0
          ? { backends: { "*": { module: "./link/{backend}/basic.js", export: "{backend}Funcify" } } }
          : { registrations: { numba: "./numba.js" } };
    mkdirSync(join(dir, "node_modules", name), { recursive: true });
    writeFileSync(join(dir, "node_modules", name, "package.json"), JSON.stringify(pkg));
  }
  return dir;
}

export function runDiscoveryBench({ rounds = 31 } = {}) {
  const sizes = [100, 500, 2000];
  const dirs = Object.fromEntries(sizes.map((n) => [n, makeTree(n)]));
  const samples = Object.fromEntries(sizes.map((n) => [n, []]));
  let files;
  for (let r = 0; r < rounds; r++) {
    for (const n of r % 2 ? [...sizes].reverse() : sizes) {
      const start = process.hrtime.bigint();
      const config = discover({ root: dirs[n] });
      samples[n].push(Number(process.hrtime.bigint() - start) / 1e6);
      files = config.files.length;
      if (config.rules.length !== 1 || config.plugins.length !== 3) throw new Error("discovery found the wrong config");
    }
  }
  const medians = Object.fromEntries(sizes.map((n) => [n, median(samples[n])]));
  return { medians, filesRead: files, ratio2000to100: medians[2000] / medians[100] };
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(runDiscoveryBench(), null, 2));
