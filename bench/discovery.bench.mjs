// Config discovery with 100, 500 and 2,000 packages installed, 20 of them direct dependencies (4 of
// those declare dispatchHook), and the scope learning the hooks do as modules resolve: 2,000 module
// URLs spread over the 20 direct dependencies and a toolkit that brings a plugin the app does not
// list. The cost must not grow with what is installed: only the packages the program reaches are read.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Discovery, discover } from "../dist/hooks/discovery.js";
import { median } from "./lib.mjs";

const root = join(fileURLToPath(new URL("..", import.meta.url)), ".bench-apps", "discovery");

function makeTree(installed) {
  const dir = join(root, String(installed));
  rmSync(dir, { recursive: true, force: true });
  const direct = Array.from({ length: 20 }, (_, i) => `direct${i}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app", dependencies: Object.fromEntries(direct.map((d) => [d, "*"])) }));
  // app → direct19 → toolkit → (direct0, the framework, and late-plugin): the plugin is found only
  // by learning, when the toolkit's modules resolve.
  mkdirSync(join(dir, "node_modules/toolkit"), { recursive: true });
  writeFileSync(
    join(dir, "node_modules/toolkit/package.json"),
    JSON.stringify({ name: "toolkit", dependencies: { direct0: "*", "late-plugin": "*" } }),
  );
  mkdirSync(join(dir, "node_modules/late-plugin"), { recursive: true });
  writeFileSync(
    join(dir, "node_modules/late-plugin/package.json"),
    JSON.stringify({ name: "late-plugin", dispatchHook: { registrations: { numba: "./n.js" } } }),
  );
  for (let i = 0; i < installed; i++) {
    const name = i < 20 ? direct[i] : `transitive${i}`;
    const pkg = { name, version: "1.0.0", ...(i === 19 ? { dependencies: { toolkit: "*" } } : {}) };
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

/** 2,000 module URLs in the toolkit and the 20 direct dependencies, as the hooks would resolve them. */
function moduleUrls(dir) {
  const packages = ["toolkit", ...Array.from({ length: 20 }, (_, i) => `direct${i}`)];
  return Array.from(
    { length: 2000 },
    (_, i) => pathToFileURL(join(dir, "node_modules", packages[i % packages.length], `lib/m${i}.js`)).href,
  );
}

export function runDiscoveryBench({ rounds = 31 } = {}) {
  const sizes = [100, 500, 2000];
  const dirs = Object.fromEntries(sizes.map((n) => [n, makeTree(n)]));
  const samples = Object.fromEntries(sizes.map((n) => [n, []]));
  const learning = Object.fromEntries(sizes.map((n) => [n, []]));
  const urls = Object.fromEntries(sizes.map((n) => [n, moduleUrls(dirs[n])]));
  let files;
  let learnedFiles;
  for (let r = 0; r < rounds; r++) {
    for (const n of r % 2 ? [...sizes].reverse() : sizes) {
      const start = process.hrtime.bigint();
      const config = discover({ root: dirs[n] });
      samples[n].push(Number(process.hrtime.bigint() - start) / 1e6);
      files = config.files.length;
      if (config.rules.length !== 1 || config.plugins.length !== 3) throw new Error("discovery found the wrong config");
      const discovery = new Discovery({ root: dirs[n] });
      const learnStart = process.hrtime.bigint();
      for (const url of urls[n]) discovery.learn(url);
      learning[n].push(Number(process.hrtime.bigint() - learnStart) / 1e6);
      const learned = discovery.config();
      learnedFiles = learned.files.length;
      if (!learned.plugins.some((p) => p.name === "late-plugin")) throw new Error("scope learning missed the plugin beside the framework");
    }
  }
  const medians = Object.fromEntries(sizes.map((n) => [n, median(samples[n])]));
  const learnMedians = Object.fromEntries(sizes.map((n) => [n, median(learning[n])]));
  return {
    medians,
    learnMedians,
    filesRead: files,
    learnedFiles,
    ratio2000to100: medians[2000] / medians[100],
    learnRatio2000to100: learnMedians[2000] / learnMedians[100],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(runDiscoveryBench(), null, 2));
