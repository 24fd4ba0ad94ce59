// Module instances: one dispatch module imported as ?v=1 … ?v=N, as a test runner's per-file module
// graphs do. For N = 100, 400 and 1,600, each configuration (plain node, a do-nothing hook, the
// dispatch-hook loader) runs the same app in a fresh process, alternately, round after round. Per
// instance: the median time of the N imports divided by N, and the heap the loader keeps beyond a
// plain run of the same imports (after gc), divided by N.
//
// Run on its own: node bench/instances.mjs [rounds]
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fmt, median, table } from "./lib.mjs";

const repo = fileURLToPath(new URL("..", import.meta.url));

/** A framework with one watched dispatch module, and (when `plugin`) a plugin with a registration module. */
export function makeInstanceApp(plugin) {
  const root = mkdtempSync(join(tmpdir(), "dispatch-hook-instances-"));
  const write = (path, text) => {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write(
    "node_modules/fw/package.json",
    JSON.stringify({
      name: "fw",
      type: "module",
      exports: { "./*": "./*" },
      dispatchHook: { backends: { cpu: { module: "./cpu.js", export: "cpuTable" } } },
    }),
  );
  write("node_modules/fw/ops.js", "export class Add {}\nexport class Mul {}\n");
  write(
    "node_modules/fw/cpu.js",
    'import { Add } from "./ops.js";\nexport const cpuTable = new Map([[Add, (a, b) => a + b]]);\nexport function run(op, ...args) { return cpuTable.get(op.constructor)(...args); }\n',
  );
  const deps = { fw: "1.0.0" };
  if (plugin) {
    write(
      "node_modules/mul-ops/package.json",
      JSON.stringify({ name: "mul-ops", type: "module", dispatchHook: { registrations: { cpu: "./cpu.js" } } }),
    );
    write(
      "node_modules/mul-ops/cpu.js",
      'import { register } from "dispatch-hook";\nimport { Mul } from "fw/ops.js";\nregister("cpu", Mul, (a, b) => a * b);\n',
    );
    deps["mul-ops"] = "1.0.0";
  }
  mkdirSync(join(root, "node_modules"), { recursive: true });
  spawnSync("ln", ["-s", repo, join(root, "node_modules/dispatch-hook")]);
  write("package.json", JSON.stringify({ name: "app", type: "module", dependencies: deps }));
  write(
    "main.mjs",
    [
      "const n = Number(process.argv[2]);",
      'const url = new URL("./node_modules/fw/cpu.js", import.meta.url).href;',
      "const start = performance.now();",
      "for (let i = 1; i <= n; i++) await import(url + '?v=' + i);",
      "const ms = performance.now() - start;",
      "for (let i = 0; i < 4; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 0)); }",
      "console.log(JSON.stringify({ ms, heap: process.memoryUsage().heapUsed }));",
    ].join("\n"),
  );
  return root;
}

const configurations = {
  "plain node": [],
  "do-nothing hook": ["--import", join(repo, "bench/passthrough.mjs")],
  "dispatch-hook loader": ["--import", join(repo, "loader.mjs")],
};

function once(binary, root, args, n) {
  const result = spawnSync(binary, ["--expose-gc", ...args, "main.mjs", String(n)], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, NODE_OPTIONS: "", DISPATCH_HOOK_AUDIT: "" },
  });
  if (result.status !== 0) throw new Error(`instances bench failed:\n${result.stderr}`);
  return JSON.parse(result.stdout.trim().split("\n").at(-1));
}

export function runInstancesBench(binary = process.execPath, { rounds = 7, sizes = [100, 400, 1600] } = {}) {
  const rows = [];
  for (const plugin of [false, true]) {
    const root = makeInstanceApp(plugin);
    try {
      for (const n of sizes) {
        const samples = Object.fromEntries(Object.keys(configurations).map((name) => [name, []]));
        const names = Object.keys(configurations);
        for (let r = 0; r < rounds; r++) {
          for (let i = 0; i < names.length; i++) {
            const name = names[(i + r) % names.length];
            samples[name].push(once(binary, root, configurations[name], n));
          }
        }
        const perInstance = (name) => (median(samples[name].map((s) => s.ms)) * 1000) / n;
        const ratio = (a, b) => median(samples[a].map((s, i) => s.ms / samples[b][i].ms));
        const kept = (median(samples["dispatch-hook loader"].map((s) => s.heap)) - median(samples["plain node"].map((s) => s.heap))) / n;
        rows.push({
          plugin,
          n,
          plain: perInstance("plain node"),
          floor: perInstance("do-nothing hook"),
          loader: perInstance("dispatch-hook loader"),
          vsFloor: ratio("dispatch-hook loader", "do-nothing hook"),
          vsPlain: ratio("dispatch-hook loader", "plain node"),
          keptBytes: kept,
        });
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  return rows;
}

export function instancesTable(rows) {
  return table(
    [
      "module graph",
      "N",
      "plain µs/instance",
      "do-nothing hook µs/instance",
      "loader µs/instance",
      "× do-nothing hook",
      "× plain",
      "loader's bytes kept per instance",
    ],
    rows.map((r) => [
      r.plugin ? "dispatch module + 1 plugin" : "dispatch module",
      String(r.n),
      fmt(r.plain, 1),
      fmt(r.floor, 1),
      fmt(r.loader, 1),
      fmt(r.vsFloor),
      fmt(r.vsPlain),
      fmt(r.keptBytes, 0),
    ]),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = runInstancesBench(process.env.BENCH_NODE || process.execPath, { rounds: Number(process.argv[2] ?? 7) });
  console.log(instancesTable(rows));
}
