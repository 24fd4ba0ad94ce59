// Loader overhead at start-up in instructions executed, where wall time is too noisy to judge a few
// per cent: valgrind's callgrind counts every instruction of the process (all threads), and V8's
// --predictable with fixed seeds makes a run repeat to within a couple of thousand instructions. Only
// for in-thread hooks (module.registerHooks): with module.register the main thread waits on the
// hooks thread, and the count is not repeatable. Needs valgrind on PATH (see hasValgrind()).
import { spawnSync } from "node:child_process";
import { configurations } from "./startup.mjs";

const determinism = ["--predictable", "--random-seed=1", "--hash-seed=1"];

export function hasValgrind() {
  return spawnSync("valgrind", ["--version"], { encoding: "utf8" }).status === 0;
}

/** Instructions executed by one run of `config` on `app` (callgrind's "Collected" total). */
function count(binary, app, config, env = {}) {
  const result = spawnSync("valgrind", ["--tool=callgrind", "--callgrind-out-file=/dev/null", binary, ...determinism, ...config.args], {
    cwd: app.root,
    env: { ...process.env, NODE_OPTIONS: "", ...config.env, ...env },
    encoding: "utf8",
    maxBuffer: 64 * 2 ** 20,
  });
  const found = /Collected\s*:\s*(\d+)/.exec(result.stderr);
  if (result.status !== 0 || found === null) throw new Error(`callgrind ${config.args.join(" ")} failed:\n${result.stderr.slice(-2000)}`);
  return Number(found[1]);
}

/**
 * The do-nothing hook and the loader on each app, counted once each (a count repeats, so one run is
 * the figure). On the first app the loader is counted once more, to show how far a count repeats.
 */
export function runInstructionBench(binary, apps) {
  const rows = [];
  let repeat;
  for (const [kind, app] of Object.entries(apps)) {
    const configs = configurations(app);
    const floor = count(binary, app, configs["do-nothing hook"]);
    const loader = count(binary, app, configs["dispatch-hook loader"]);
    if (repeat === undefined) repeat = Math.abs(count(binary, app, configs["dispatch-hook loader"]) - loader);
    rows.push({ kind, floor, loader, ratio: loader / floor });
  }
  return { rows, repeat };
}
