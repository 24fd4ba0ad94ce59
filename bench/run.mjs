// npm run bench: runs the five benchmarks, prints a summary, and writes bench/RESULTS.md.
import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { hookMode } from "../dist/hooks/hook-mode.js";
import { runDiscoveryBench } from "./discovery.bench.mjs";
import { runDispatchBench } from "./dispatch.bench.mjs";
import { dispatchableSection, runDispatchableBenches } from "./dispatchable.bench.mjs";
import { instancesTable, runInstancesBench } from "./instances.mjs";
import { hasValgrind, runInstructionBench } from "./instructions.mjs";
import { fmt, machine, table } from "./lib.mjs";
import { makeApps } from "./make-apps.mjs";
import { runFoldBench, runRecordsBench } from "./records.mjs";
import { runPairedBench, runStartupBench } from "./startup.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const rounds = Number(process.env.BENCH_ROUNDS ?? 15);
const pairs = Number(process.env.BENCH_PAIRS ?? 60);
const verdict = (ok) => (ok ? "met" : "**missed**");
const sections = [
  `# Benchmark results\n\n${machine()}. Produced by \`npm run bench\` (bench/run.mjs); every figure is a median, every ratio is taken between contenders measured alternately in the same run.`,
];
console.log(machine());

// 1. The dispatch hot path.
console.log("\n1. dispatch hot path …");
const dispatch = await runDispatchBench();
const dispatcherRow = dispatch.rows.find((r) => r.name === "Dispatcher");
const libs = dispatch.rows.filter((r) => r.name.startsWith("@") || r.name.startsWith("typed"));
const dispatchOk = dispatcherRow.ratio <= 1.5;
const fasterThanLibs = libs.every((r) => r.ns > dispatcherRow.ns);
sections.push(
  [
    "## 1. The dispatch hot path",
    "Resolve and call for instances of 16 op classes in four hierarchies of depth 4, warm cache (tinybench, rounds alternated; ns per call).",
    table(
      ["contender", "ns/call", "× Map.get"],
      dispatch.rows.map((r) => [r.name, fmt(r.ns), fmt(r.ratio)]),
    ),
    `- Uncached resolve (first sight of a class, chain walk of depth 5): ${fmt(dispatch.uncachedNs)} ns.`,
    `- First call after a \`register\` (cache cleared, one walk): ${fmt(dispatch.afterRegisterNs)} ns (includes the timer's own cost).`,
    `- Target: Dispatcher ≤ 1.5× the raw Map.get: ${fmt(dispatcherRow.ratio)}× — ${verdict(dispatchOk)}. Faster than both libraries: ${verdict(fasterThanLibs)}.`,
  ].join("\n\n"),
);
console.log(dispatch.rows.map((r) => `  ${r.name.padEnd(24)} ${fmt(r.ns)} ns  ${fmt(r.ratio)}×`).join("\n"));

// 2. Registration and audit (a child process, for --expose-gc and a clean heap).
console.log("\n2. registration and audit …");
const registration = JSON.parse(
  execFileSync(process.execPath, ["--expose-gc", join(here, "registration.bench.mjs")], { encoding: "utf8" }),
);
const withSites = registration.perRegistrationNs["with call sites"];
const without = registration.perRegistrationNs["without call sites"];
const regOk = withSites.total <= 2000;
let profile = "";
if (!regOk || without.total > 2000) {
  // Where the time goes: a CPU profile of the deferred-register-then-provide loop.
  const dir = join(here, "..", ".bench-apps", "profile");
  rmSync(dir, { recursive: true, force: true });
  spawnSync(process.execPath, ["--cpu-prof", "--cpu-prof-dir", dir, join(here, "registration.bench.mjs")], { encoding: "utf8" });
  const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
  const p = JSON.parse(readFileSync(join(dir, file), "utf8"));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map();
  for (const id of p.samples) {
    const n = byId.get(id);
    const key = `${n.callFrame.functionName || "(anonymous)"} ${n.callFrame.url.split("/").slice(-2).join("/")}`;
    self.set(key, (self.get(key) ?? 0) + 1);
  }
  const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 10);
  profile = table(
    ["self time", "function"],
    top.map(([k, v]) => [`${fmt((100 * v) / p.samples.length, 1)}%`, `\`${k.trim()}\``]),
  );
}
sections.push(
  [
    "## 2. Registration and audit",
    "10,000 fresh op types registered while the backend is missing, then its table provided (ns per registration, audit record included).",
    table(
      ["", "register (deferred)", "apply at provide", "total"],
      [
        ["without call sites (the default, while no audit runs)", fmt(without.register, 0), fmt(without.provide, 0), fmt(without.total, 0)],
        ["with call sites (while an audit runs)", fmt(withSites.register, 0), fmt(withSites.provide, 0), fmt(withSites.total, 0)],
      ],
    ),
    `- Side by side, V8's own cost for the first use of 10,000 fresh classes and their prototypes as Map keys (2 Map.set each, no registry): ${fmt(registration.freshKeyFloorNs, 0)} ns per class. Any class-keyed table pays it once per class.`,
    `- 10,000 registrations of 40 reused op types over 250 backends, register and apply: ${fmt(registration.reusedTypesNs, 0)} ns per registration without call sites, ${fmt(registration.reusedTypesWithSitesNs, 0)} ns with them; the same registrations into tables made beforehand (registering alone): ${fmt(registration.intoExistingTablesNs, 0)} ns.`,
    `- Recording a call site, the ways measured side by side (ns per capture, from the same stack depth): ${Object.entries(
      registration.captureNs,
    )
      .map(([name, ns]) => `${name} ${fmt(ns, 0)}`)
      .join(
        "; ",
      )}. Capturing only the frame needed is the cheapest way V8 offers, and on its own it costs about as much as the whole 2 µs budget: with call sites on, the target cannot be met by any of them. Capturing "lazily on first read" is not possible: the stack is gone by then; what is lazy already is the formatting, done only when the log is read.`,
    registration.memory
      ? `- Memory held by a registry and its audit log after ${registration.memory.events.toLocaleString("en")} events: ${fmt(registration.memory.bytes / 2 ** 20, 1)} MiB, ${fmt(registration.memory.perEvent, 0)} bytes per event (registrations, their handles and the events together).`
      : "",
    `- Target: ≤ 2 µs per registration including its audit record, by default (call sites are captured only while an audit runs: DISPATCH_HOOK_AUDIT or the command line). Registering: ${fmt(without.register / 1000)} µs — ${verdict(without.register <= 2000)}; register and apply: ${fmt(without.total / 1000)} µs — ${verdict(without.total <= 2000)}; with op types reused: ${fmt(registration.reusedTypesNs / 1000)} µs — ${verdict(registration.reusedTypesNs <= 2000)}; into existing tables: ${fmt(registration.intoExistingTablesNs / 1000)} µs — ${verdict(registration.intoExistingTablesNs <= 2000)}. While an audit runs (call sites): ${fmt(withSites.total / 1000)} µs.`,
    profile
      ? `Where the time goes (CPU profile of the fresh-type run, self time):\n\n${profile}\n\nCapturing the caller's stack (\`Error.captureStackTrace\`) is most of the cost with call sites; V8 formats it lazily, and we format it only when the log is read. Registries capture call sites only while an audit runs; \`createRegistry({ callSites })\` decides for one registry.`
      : "",
  ]
    .filter(Boolean)
    .join("\n\n"),
);
console.log(
  `  with call sites ${fmt(withSites.total, 0)} ns, without ${fmt(without.total, 0)} ns, reused types ${fmt(registration.reusedTypesNs, 0)} ns, floor ${fmt(registration.freshKeyFloorNs, 0)} ns`,
);

// 3. Loader overhead at start-up, on this Node and on Node 24.
console.log("\n3. start-up …");
const apps = makeApps();
const binaries = [["this machine's Node", process.execPath]];
try {
  binaries.push(["Node 24", execFileSync("npx", ["-y", "node@24", "-p", "process.execPath"], { encoding: "utf8" }).trim()]);
} catch {
  console.log("  (Node 24 is not available from the npm registry here; skipped)");
}
const startupRows = [];
const startupVerdicts = [];
const versions = new Map(
  binaries.map(([, binary]) => [binary, execFileSync(binary, ["-p", "process.versions.node"], { encoding: "utf8" }).trim()]),
);
for (const [label, binary] of binaries) {
  const version = versions.get(binary);
  for (const [kind, app] of Object.entries(apps)) {
    // The framework-first variants only answer how the loader compares with the floor there.
    const first = kind.endsWith("framework first");
    const result = runStartupBench(binary, app, {
      rounds,
      ...(first ? { only: ["plain node", "do-nothing hook", "dispatch-hook loader"] } : {}),
    });
    const m = result.medians;
    const peer = m["import-in-the-middle"] === undefined ? undefined : "import-in-the-middle";
    const paired = runPairedBench(binary, app, { pairs, against: peer === undefined ? ["do-nothing hook"] : ["do-nothing hook", peer] });
    const { ratio, interval } = paired["do-nothing hook"];
    const what = `${kind.startsWith("esm") ? "ES modules" : "CommonJS"}${first ? ", framework imported first" : ""}`;
    const span = (p) => `${fmt(p.ratio, 3)}× (95% interval ${fmt(p.interval[0], 3)}–${fmt(p.interval[1], 3)})`;
    startupVerdicts.push(
      `Node ${version}, ${what}: ${span(paired["do-nothing hook"])} the floor — ${verdict(ratio <= 1.05)}${peer === undefined ? "" : `; ${span(paired[peer])} import-in-the-middle — below it: ${verdict(paired[peer].ratio < 1)}`}`,
    );
    console.log(
      `  ${label} ${version} ${kind}: loader/floor ${fmt(ratio, 3)} (${fmt(interval[0], 3)}–${fmt(interval[1], 3)})${peer === undefined ? "" : `, loader/iitm ${fmt(paired[peer].ratio, 3)}`}`,
    );
    for (const [name, ms] of Object.entries(m))
      startupRows.push([
        `Node ${version}`,
        `2,000 ${kind.startsWith("esm") ? "ES modules" : "CommonJS"}${first ? ", framework first" : ""}`,
        name,
        fmt(ms, 1),
        fmt(result.overFloor[name], 3),
        fmt(result.overPlain[name], 3),
      ]);
    console.log(
      `  ${label} ${version} ${kind}: ${Object.entries(m)
        .map(([k, v]) => `${k} ${fmt(v, 0)} ms`)
        .join(", ")}`,
    );
  }
  void label;
}
sections.push(
  [
    "## 3. Loader overhead at start-up",
    `Synthetic apps (bench/make-apps.mjs, generated, not committed): 2,000 modules in 20 packages, each module importing up to three others, plus a framework whose 4 watched dispatch modules load at start-up and a plugin with a registration module per backend, which the app imports itself in every configuration (so every configuration does the same work; under the loader they are also the declared registration modules and land in the tables). Each configuration starts a fresh process; configurations alternate within each of ${rounds} rounds, after one run of each that is not timed (it warms the file cache). Times are medians of wall time; each ratio is the median of the rounds' own ratios, between runs made side by side (the machine's speed drifts between rounds, and a ratio of medians would carry that drift). The floor is a do-nothing hook of the API dispatch-hook uses on that Node (\`module.register\` on 20, \`module.registerHooks\` on 24). Two rows show where the loader's time goes: "(our modules + do-nothing hook)" loads everything loader.mjs loads but installs only the do-nothing hook (its difference to the floor is the cost of loading dispatch-hook itself), and "(loader with no config)" installs the real hooks with nothing to watch (its difference to the full loader is the watched path: discovery, instrumenting the 4 dispatch modules and applying the registrations). The app imports the framework last; the "framework first" rows import it first, so that its dispatch modules load before nearly every other module. This mattered on Node 24 while the in-thread hooks kept their load hook from the first dispatch module on: then almost no module passed through it in the first app, and almost every module in the second. They now detach it again once the generated modules have loaded, so in both apps only the modules loaded in between pass through it.`,
    table(["Node", "app", "configuration", "ms", "× floor", "× plain"], startupRows),
    `The verdicts below rest on a separate run of just the configurations they compare, the loader and the do-nothing hook, in ${pairs} rounds per app, with import-in-the-middle as a third where the table has it (the order rotates from round to round; \`BENCH_PAIRS\` sets the number): single runs here differ by tens of per cent, and the median of ${rounds} rounds can land a few per cent either side of the truth, as the table's own rows show where plain node comes out slower than a hook. Each verdict gives the median over the rounds of the loader's time divided by the other's, and a 95% interval for that median (resampling).`,
    ...startupVerdicts.map((v) => `- ${v}`),
  ].join("\n\n"),
);

// 3b. The same comparison in instructions executed, on the Node that uses in-thread hooks.
const inThread = binaries.find(([, binary]) => hookMode(versions.get(binary)) === "registerHooks");
let counted;
let notCounted = "it needs valgrind on PATH and a Node that uses in-thread hooks (module.registerHooks)";
if (inThread !== undefined && hasValgrind()) {
  console.log("\n3b. start-up in instructions (callgrind) …");
  try {
    counted = runInstructionBench(inThread[1], apps);
  } catch (error) {
    notCounted = `callgrind failed: ${String(error.message).split("\n")[0]}`;
    console.log(`  ${notCounted}`);
  }
}
if (counted !== undefined) {
  const version = versions.get(inThread[1]);
  const millions = (n) => fmt(n / 1e6, 1);
  const repeat = (d) => (d === 0 ? "the same count" : `${d.toLocaleString("en")} instructions apart`);
  sections.push(
    [
      "### Start-up in instructions executed",
      `Wall time on a shared machine moves by more than the few per cent the target allows, from one pair of runs to the next. Instructions do not: valgrind's callgrind counts every instruction the process executes (all its threads), and V8's \`--predictable --random-seed=1 --hash-seed=1\` makes a run repeat (the first app's loader, counted twice: ${repeat(counted.repeat)}). Node ${version}, \`module.registerHooks\`, the same apps; millions of instructions. Instructions are not time: our code runs once and cold, and the loop it is compared with is hot, so a per cent of instructions costs somewhat more than a per cent of wall time.`,
      table(
        ["app", "do-nothing hook", "dispatch-hook loader", "ratio"],
        counted.rows.map((r) => [r.kind, millions(r.floor), millions(r.loader), fmt(r.ratio, 3)]),
      ),
      ...counted.rows.map(
        (r) => `- Node ${version}, ${r.kind}: ${fmt(r.ratio, 3)}× the floor's instructions — ${verdict(r.ratio <= 1.05)}`,
      ),
    ].join("\n\n"),
  );
  console.log(
    counted.rows
      .map((r) => `  ${r.kind.padEnd(24)} ${millions(r.floor)} M floor, ${millions(r.loader)} M loader, ${fmt(r.ratio, 3)}×`)
      .join("\n"),
  );
} else {
  sections.push(`### Start-up in instructions executed\n\nNot counted in this run: ${notCounted}.`);
}

// 4. Discovery.
console.log("\n4. discovery …");
const discovery = runDiscoveryBench();
sections.push(
  [
    "## 4. Config discovery",
    "An app with 21 direct dependencies (4 declare dispatchHook; one of the others brings a toolkit that depends on the framework and on a plugin the app does not list) and 100, 500 or 2,000 packages installed in node_modules. Eager: what the loader reads at start-up (the entry point's package and its direct dependencies). Learning: the scope learning the hooks do as 2,000 module URLs of the toolkit and the direct dependencies resolve, which finds the toolkit's plugin.",
    table(
      ["installed packages", "eager discovery (ms)", "learning 2,000 module URLs (ms)"],
      Object.keys(discovery.medians).map((n) => [n, fmt(discovery.medians[n], 3), fmt(discovery.learnMedians[n], 3)]),
    ),
    `- Files read: ${discovery.filesRead} eagerly, ${discovery.learnedFiles} after learning, whatever is installed. 2,000 vs 100 installed: eager ${fmt(discovery.ratio2000to100, 2)}×, learning ${fmt(discovery.learnRatio2000to100, 2)}× — the cost does not grow with node_modules: ${verdict(discovery.ratio2000to100 < 1.25 && discovery.learnRatio2000to100 < 1.25)}.`,
  ].join("\n\n"),
);
console.log(
  `  ${Object.entries(discovery.medians)
    .map(([n, ms]) => `${n}: ${fmt(ms, 3)} ms eager, ${fmt(discovery.learnMedians[n], 3)} ms learning`)
    .join("; ")}`,
);

// 5. Dispatchable functions (and again in a child process without generated code).
console.log("\n5. dispatchable functions …");
const chosen = await runDispatchableBenches({ rounds: Math.max(7, rounds) });
sections.push(dispatchableSection(chosen));
console.log(
  chosen.pairs
    .map(
      (p) =>
        `  ${p.name.padEnd(66)} ${fmt(p.ratio)}× (${fmt(p.ours)} ns), no generated code ${fmt(p.noCodegenRatio)}× (${fmt(p.noCodegen)} ns)`,
    )
    .join("\n"),
);

// 6. Module instances (?v=N), on this Node and on Node 24.
console.log("\n6. module instances …");
const instanceSections = [
  "## 6. Module instances",
  "One dispatch module imported as `?v=1` … `?v=N` in one process, as a test runner's per-file module graphs do: alone (the loader appends its signal to the module), and with one plugin's registration module (a facade and its markers per instance). Each configuration runs the same app in a fresh process, alternately; per instance, the median time of the N imports divided by N, and the heap the loader keeps beyond a plain run of the same imports after gc, divided by N (`bench/instances.mjs`).",
];
for (const [label, binary] of binaries) {
  const rows = runInstancesBench(binary, { rounds: Math.max(5, Math.round(rounds / 2)) });
  instanceSections.push(`### ${label} (Node ${versions.get(binary)})`, instancesTable(rows));
  const alone = rows.filter((r) => !r.plugin);
  const perInstance = alone.map((r) => r.loader);
  const flat = Math.max(...perInstance) / Math.min(...perInstance);
  instanceSections.push(
    `- Alone: per-instance time from N = 100 to 1,600 within ${fmt(flat)}× (target 1.5×) — ${verdict(flat <= 1.5)}; × the do-nothing hook ${alone.map((r) => fmt(r.vsFloor)).join(", ")} (target ≤ 1.2×) — ${verdict(alone.every((r) => r.vsFloor <= 1.2))}; bytes kept per instance ${alone.map((r) => fmt(r.keptBytes, 0)).join(", ")} (target < 1,024) — ${verdict(alone.every((r) => r.keptBytes < 1024))}.`,
  );
  console.log(instancesTable(rows));
}
sections.push(instanceSections.join("\n\n"));

// 7. The run audit: one record at exit, and folding a run's records.
console.log("\n7. the run audit …");
{
  const write = runRecordsBench();
  const fold = await runFoldBench(write.foldDir);
  rmSync(join(write.foldDir, ".."), { recursive: true, force: true });
  sections.push(
    [
      "## 7. The run audit",
      "`bench/records.mjs`. Writing one thread's record as the exit handler does (the thread's audit, then the file written and renamed into place), in a process that ran the example app under the loader (16 registrations on 4 backends): the median of 41 writes. Folding a run directory of 1,000 such records as `dispatch-hook audit` does: the median of 7 folds. Nothing of it runs while no audit is asked for: the main entry reads two environment variables.",
      table(
        ["what", "median", "target"],
        [
          ["write one record at exit", `${fmt(write.writeMs)} ms`, "< 2 ms"],
          [`fold ${fold.records} records`, `${fmt(fold.foldMs, 0)} ms`, "< 1,000 ms"],
        ],
      ),
    ].join("\n\n"),
  );
}

writeFileSync(join(here, "RESULTS.md"), `${sections.join("\n\n")}\n`);
rmSync(join(here, "..", ".bench-apps"), { recursive: true, force: true });
console.log("\nwrote bench/RESULTS.md");
