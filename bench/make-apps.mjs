// Generates the synthetic apps for the start-up benchmark (not committed): 2,000 modules in a
// realistic import graph (20 packages of 100 modules, each module importing up to three others),
// plus a framework whose 4 watched dispatch modules load at start-up, and a plugin with a
// registration module per backend. One app in ES modules, one in CommonJS.
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("..", import.meta.url));
export const appsRoot = join(repo, ".bench-apps");
const backends = ["numba", "jax", "mlx", "pytorch"];

function write(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

function makeApp(format) {
  const esm = format === "esm";
  const root = join(appsRoot, format);
  const ext = esm ? "js" : "js";
  const imp = (spec, name) =>
    esm ? `import { value as ${name} } from ${JSON.stringify(spec)};` : `const { value: ${name} } = require(${JSON.stringify(spec)});`;
  const exp = (expr) => (esm ? `export const value = ${expr};` : `exports.value = ${expr};`);
  const type = esm ? "module" : "commonjs";
  const packages = Array.from({ length: 20 }, (_, i) => `pkg${i}`);
  write(
    join(root, "package.json"),
    JSON.stringify({
      name: `bench-${format}`,
      type,
      dependencies: Object.fromEntries([...packages, "framework", "plugin", "dispatch-hook"].map((p) => [p, "*"])),
    }),
  );
  mkdirSync(join(root, "node_modules"), { recursive: true });
  symlinkSync(repo, join(root, "node_modules/dispatch-hook"), "dir");
  // 20 packages × 100 modules: module j imports up to three modules below it.
  for (const pkg of packages) {
    const dir = join(root, "node_modules", pkg);
    write(join(dir, "package.json"), JSON.stringify({ name: pkg, type, main: `./m0.${ext}` }));
    for (let j = 0; j < 100; j++) {
      const deps = [j * 3 + 1, j * 3 + 2, j * 3 + 3].filter((d) => d < 100);
      const lines = deps.map((d, k) => imp(`./m${d}.${ext}`, `d${k}`));
      lines.push(exp(`${j} + ${deps.map((_, k) => `d${k}`).join(" + ") || 0}`));
      write(join(dir, `m${j}.${ext}`), `${lines.join("\n")}\n`);
    }
  }
  // The framework: 4 dispatch modules, declared with the {backend} pattern.
  const fw = join(root, "node_modules/framework");
  write(
    join(fw, "package.json"),
    JSON.stringify({
      name: "framework",
      type,
      main: `./index.${ext}`,
      dispatchHook: { backends: { "*": { module: `./link/{backend}/dispatch/basic.${ext}`, export: "{backend}Funcify" } } },
    }),
  );
  write(
    join(fw, `index.${ext}`),
    `${backends.map((b, i) => imp(`./link/${b}/dispatch/basic.${ext}`, `t${i}`)).join("\n")}\n${exp("[t0, t1, t2, t3]")}\n`,
  );
  for (const b of backends) {
    const table = `{ entries: new Map(), register(type, fn) { this.entries.set(type, fn); }, get(type) { return this.entries.get(type); }, unregister(type) { this.entries.delete(type); } }`;
    write(
      join(fw, `link/${b}/dispatch/basic.${ext}`),
      esm
        ? `export const ${b}Funcify = ${table};\nexport const value = ${b}Funcify;\n`
        : `exports.${b}Funcify = ${table};\nexports.value = exports.${b}Funcify;\n`,
    );
  }
  // The plugin: a registration module per backend (ES modules that import dispatch-hook).
  const plugin = join(root, "node_modules/plugin");
  write(
    join(plugin, "package.json"),
    JSON.stringify({
      name: "plugin",
      type: "module",
      exports: { "./dispatch/*": "./dispatch/*" },
      dispatchHook: { registrations: Object.fromEntries(backends.map((b) => [b, `./dispatch/${b}.js`])) },
    }),
  );
  for (const b of backends) {
    write(
      join(plugin, `dispatch/${b}.js`),
      `import { register } from "dispatch-hook";\nclass PluginOp {}\nregister(${JSON.stringify(b)}, PluginOp, () => 0);\n`,
    );
  }
  const mainFile = esm ? "main.mjs" : "main.cjs";
  // The app loads the plugin's registrations itself, in every configuration, so that all of them do
  // the same work; under the dispatch-hook loader they are also the declared registration modules
  // (already loaded, so nothing loads twice) and land in the tables.
  const registrations = backends.map((b) => (esm ? `import "plugin/dispatch/${b}.js";` : `require("plugin/dispatch/${b}.js");`));
  const mainLines = [...registrations, ...packages.map((p, i) => imp(p, `p${i}`)), imp("framework", "fw")];
  mainLines.push(esm ? "globalThis.__sum = p0;" : "globalThis.__sum = p0;");
  write(join(root, mainFile), `${mainLines.join("\n")}\n`);
  // The same app with the framework imported first: its dispatch modules then load before nearly
  // every other module, not after them. dispatch-hook's in-thread hooks attach load() when the first
  // dispatch module is resolved, so this order shows what every module costs once load() is on.
  const firstFile = esm ? "main-framework-first.mjs" : "main-framework-first.cjs";
  const last = mainLines.length - 2;
  write(join(root, firstFile), `${[mainLines[last], ...mainLines.slice(0, last), ...mainLines.slice(last + 1)].join("\n")}\n`);
  const watched = backends.map((b) => join(fw, `link/${b}/dispatch/basic.${ext}`));
  return [
    { root, main: mainFile, watched },
    { root, main: firstFile, watched },
  ];
}

/** The apps by name: ES modules and CommonJS, each also with the framework imported first. */
export function makeApps() {
  rmSync(appsRoot, { recursive: true, force: true });
  const [esm, esmFirst] = makeApp("esm");
  const [cjs, cjsFirst] = makeApp("cjs");
  return { esm, cjs, "esm, framework first": esmFirst, "cjs, framework first": cjsFirst };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const apps = makeApps();
  console.log(JSON.stringify(apps, null, 2));
}
