// Loader overhead at start-up: each configuration starts the same synthetic app as a fresh node
// process; configurations are alternated within every round (rotating who goes first). Each time is
// the median wall time over the rounds; each ratio is the median over the rounds of that round's
// ratio, taken between runs made side by side, so that the machine's drift between rounds cancels.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { median, medianInterval } from "./lib.mjs";

const repo = fileURLToPath(new URL("..", import.meta.url));

export function configurations(app) {
  const include = JSON.stringify(app.watched.map((f) => pathToFileURL(f).href));
  return {
    "plain node": { args: [app.main], env: {} },
    "do-nothing hook": { args: ["--import", join(repo, "bench/passthrough.mjs"), app.main], env: {} },
    "dispatch-hook loader": { args: ["--import", join(repo, "loader.mjs"), app.main], env: {} },
    "(our modules + do-nothing hook)": { args: ["--import", join(repo, "bench/modules-only.mjs"), app.main], env: {} },
    "(loader with no config)": { args: ["--import", join(repo, "bench/loader-no-config.mjs"), app.main], env: {} },
    "import-in-the-middle": { args: ["--import", join(repo, "bench/iitm.mjs"), app.main], env: { BENCH_IITM_INCLUDE: include } },
  };
}

function time(binary, app, config) {
  const start = process.hrtime.bigint();
  const result = spawnSync(binary, config.args, {
    cwd: app.root,
    env: { ...process.env, NODE_OPTIONS: "", ...config.env },
    encoding: "utf8",
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`${config.args.join(" ")} failed:\n${result.stderr}`);
  return ms;
}

export function runStartupBench(binary, app, { rounds = 15, only } = {}) {
  const configs = configurations(app);
  const names = Object.keys(configs).filter((n) => only === undefined || only.includes(n));
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  for (const name of names) time(binary, app, configs[name]); // warm the file cache
  for (let r = 0; r < rounds; r++) {
    const order = names.map((_, i) => names[(i + r) % names.length]);
    for (const name of order) samples[name].push(time(binary, app, configs[name]));
  }
  const medians = Object.fromEntries(names.map((n) => [n, median(samples[n])]));
  const paired = (base) => Object.fromEntries(names.map((n) => [n, median(samples[n].map((ms, r) => ms / samples[base][r]))]));
  return {
    medians,
    floor: medians["do-nothing hook"],
    plain: medians["plain node"],
    overFloor: paired("do-nothing hook"),
    overPlain: paired("plain node"),
  };
}

/**
 * The loader against the do-nothing hook (and, where given, against the other contenders) only, in
 * many rounds whose order rotates: the target's verdict rests on these ratios, whose medians need many
 * more rounds than the full table can afford on a machine whose runs differ by tens of per cent.
 * Returns, for each other contender, the median over the rounds of loader ÷ that contender, with a
 * 95% interval for it.
 */
export function runPairedBench(binary, app, { pairs = 60, against = ["do-nothing hook"] } = {}) {
  const configs = configurations(app);
  const names = ["dispatch-hook loader", ...against];
  for (const name of names) time(binary, app, configs[name]);
  const ratios = Object.fromEntries(against.map((name) => [name, []]));
  for (let r = 0; r < pairs; r++) {
    const ms = {};
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + r) % names.length];
      ms[name] = time(binary, app, configs[name]);
    }
    for (const name of against) ratios[name].push(ms["dispatch-hook loader"] / ms[name]);
  }
  return Object.fromEntries(against.map((name) => [name, { ratio: median(ratios[name]), interval: medianInterval(ratios[name]), pairs }]));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { makeApps } = await import("./make-apps.mjs");
  const apps = makeApps();
  for (const [kind, app] of Object.entries(apps)) {
    const result = runStartupBench(process.execPath, app, { rounds: Number(process.env.ROUNDS ?? 9) });
    console.log(kind, JSON.stringify(result));
  }
}
