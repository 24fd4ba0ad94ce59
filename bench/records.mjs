// The run audit's cost: writing one thread's record at exit, and folding a run's records.
//   node bench/records.mjs            (after a build; prints JSON)
// 1. In a process that ran the example app under the loader (16 registrations on 4 backends), the
//    time to build the thread's audit and write its record, as the exit handler does: the median
//    of 41 writes, after one that is not counted.
// 2. Folding a run directory of 1,000 such records, as `dispatch-hook audit` does: the median of
//    7 folds.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export function runRecordsBench() {
  const work = mkdtempSync(join(tmpdir(), "dispatch-hook-records-"));
  try {
    const runDir = join(work, "run");
    mkdirSync(runDir);
    // Writes in the example app's process, after its registrations have landed.
    const probe = join(root, "examples/ordering-bug/.records-probe.mjs");
    writeFileSync(
      probe,
      [
        'import { threadAudit } from "dispatch-hook";',
        `import { writeRecord } from ${JSON.stringify(join(root, "dist/registry/run-records.js"))};`,
        'for (const b of ["numba", "jax", "mlx", "pytorch"]) await import("tensorlab/link/" + b + "/dispatch/basic.js");',
        "const times = [];",
        "for (let i = 0; i < 42; i++) {",
        "  const t = process.hrtime.bigint();",
        `  writeRecord(${JSON.stringify(runDir)}, threadAudit(), 0);`,
        "  times.push(Number(process.hrtime.bigint() - t) / 1e6);",
        "}",
        "console.log(JSON.stringify(times.slice(1)));",
        "",
      ].join("\n"),
    );
    let times;
    try {
      const out = spawnSync(process.execPath, ["--import", join(root, "loader.mjs"), probe], {
        cwd: join(root, "examples/ordering-bug"),
        encoding: "utf8",
        env: { ...process.env, DISPATCH_HOOK_AUDIT_DIR: "" },
      });
      times = JSON.parse(out.stdout.trim().split("\n").pop());
    } finally {
      rmSync(probe, { force: true });
    }
    const [record] = readdirSync(runDir).filter((f) => f.endsWith(".json"));
    const foldDir = join(work, "fold");
    mkdirSync(foldDir);
    for (let i = 0; i < 1000; i++) copyFileSync(join(runDir, record), join(foldDir, `${10000 + i}-0-bench.json`));
    return { writeMs: median(times), registrations: 16, foldDir };
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
}

export async function runFoldBench(foldDir) {
  const { foldRun } = await import(join(root, "dist/hooks/run-fold.js"));
  const times = [];
  for (let i = 0; i < 8; i++) {
    const t = process.hrtime.bigint();
    const run = foldRun(foldDir);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (run.processes.length !== 1000) throw new Error(`folded ${run.processes.length} records, not 1000`);
  }
  return { foldMs: median(times.slice(1)), records: 1000 };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const write = runRecordsBench();
  try {
    console.log(JSON.stringify({ ...write, ...(await runFoldBench(write.foldDir)), foldDir: undefined }));
  } finally {
    rmSync(join(write.foldDir, ".."), { recursive: true, force: true });
  }
}
