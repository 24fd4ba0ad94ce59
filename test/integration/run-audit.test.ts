/**
 * `dispatch-hook audit -- <command>` over every process of a run: test runners' children, forks,
 * spawned and exec'd node processes, worker threads. Each writes its own record; the command folds
 * them, and a miss in any one of them fails the run.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RunAudit } from "../../src/hooks/run-fold.js";
import { makeTree, nodeBinary, repoRoot, run } from "./fixture.js";
import { frameworkEsm } from "./trees.js";

const cli = join(repoRoot, "dist/bundle/cli.js");

/** ml-ops registers for numba only, but expects PoolLayer on jax too: a process that loads jax misses. */
const app = {
  ...frameworkEsm,
  "node_modules/ml-ops/package.json": JSON.stringify({
    name: "ml-ops",
    type: "module",
    exports: { ".": "./index.js", "./*": "./*" },
    dispatchHook: { registrations: { numba: "./dispatch/numba.js" }, expects: { numba: ["PoolLayer"], jax: ["PoolLayer"] } },
  }),
  "node_modules/ml-ops/index.js": "export class PoolLayer {}\n",
  "node_modules/ml-ops/dispatch/numba.js":
    'import { register } from "dispatch-hook";\nimport { PoolLayer } from "../index.js";\nregister("numba", PoolLayer, () => "pooled");\n',
  "node_modules/dispatch-hook": { symlink: "<repo>" },
  "package.json": JSON.stringify({
    name: "app",
    type: "module",
    dependencies: { tensorlab: "*", "ml-ops": "*", "dispatch-hook": "*" },
    scripts: { check: "node fan-out.mjs" },
  }),
  "a.test.mjs": 'import test from "node:test";\ntest("numba", () => import("tensorlab/link/numba/dispatch/basic.js"));\n',
  "b.test.mjs": 'import test from "node:test";\ntest("jax", () => import("tensorlab/link/jax/dispatch/basic.js"));\n',
  "c.test.mjs": 'import test from "node:test";\ntest("numba again", () => import("tensorlab/link/numba/dispatch/basic.js"));\n',
  "backend.mjs": 'await import("tensorlab/link/" + process.argv[2] + "/dispatch/basic.js");\n',
  "worker.mjs": 'await import("tensorlab/link/numba/dispatch/basic.js");\n',
  "fan-out.mjs": [
    'import { execSync, fork, spawnSync } from "node:child_process";',
    'import { Worker } from "node:worker_threads";',
    'await import("tensorlab/link/numba/dispatch/basic.js");',
    'await new Promise((done) => fork("backend.mjs", [process.env.FORKED ?? "numba"]).on("exit", done));',
    'spawnSync(process.execPath, ["backend.mjs", "numba"], { stdio: "inherit" });',
    'execSync("node backend.mjs numba", { stdio: "inherit" });',
    'await new Promise((done) => new Worker(new URL("./worker.mjs", import.meta.url)).on("exit", done));',
    'console.log("fan-out done");',
    "",
  ].join("\n"),
};

const audit = (dir: string, args: readonly string[], env: Record<string, string | undefined> = {}) =>
  run(dir, [cli, "audit", ...args], env);

describe("one audit over every process of a run", () => {
  it("node --test: a child that misses fails the run, named with its file, while the others landed", async () => {
    const dir = makeTree(app);
    const result = await audit(dir, ["--", "--test", "a.test.mjs", "b.test.mjs", "c.test.mjs"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/\n\d+\s+main\s+\S+\s+0\s+1 problem\(s\)\s+b\.test\.mjs\n/);
    expect(result.stdout).toMatch(/\s+ok, 1 landed\s+a\.test\.mjs\n/);
    expect(result.stdout).toMatch(/\s+ok, 1 landed\s+c\.test\.mjs\n/);
    expect(result.stdout).toContain("[missing] PoolLayer on jax was expected");
    expect(result.stdout).not.toMatch(/^ok:/m);
    expect(result.stdout).toMatch(/^not ok: 1 problem\(s\) in 1 process\(es\)$/m);
  });

  it("any command: fork, spawn, exec and a worker thread each write their own record", async () => {
    const dir = makeTree(app);
    const clean = await audit(dir, ["--json", "--", "node", "fan-out.mjs"]);
    // The program's own stdout went to stderr: stdout is the JSON document alone.
    expect(clean.stderr).toContain("fan-out done");
    const report = JSON.parse(clean.stdout) as RunAudit & { exitCode: number };
    expect(report).toMatchObject({ format: "dispatch-hook/audit", version: 1, ok: true, exitCode: 0, unreadable: [] });
    const landed = report.processes.map(
      (p) => `${p.thread === 0 ? "main" : "worker"} ${p.argv.join(" ")}: ${p.report?.registrations.length}`,
    );
    expect(landed.sort()).toEqual(["main : 1", "main numba: 1", "main numba: 1", "main numba: 1", "worker : 1"]);
    expect(clean.code).toBe(0);

    // The fork loads jax, where the plugin registered nothing.
    const missed = await audit(dir, ["--", "node", "fan-out.mjs"], { FORKED: "jax" });
    expect(missed.code).toBe(1);
    expect(missed.stdout).toMatch(/1 problem\(s\)\s+backend\.mjs jax\n/);
    expect(missed.stdout).toContain("[missing] PoolLayer on jax");
  });

  it("a child the command does not wait for, which outlives it, is waited for and judged: its miss fails the run (it said ok before)", async () => {
    const dir = makeTree({
      ...app,
      // The child starts after the parent has nothing left to do, and loads jax, where the plugin registered nothing.
      "late.mjs":
        'await new Promise((done) => setTimeout(done, 300));\nawait import("tensorlab/link/jax/dispatch/basic.js");\nconsole.log("late child done");\n',
      "leave.mjs": [
        'import { spawn } from "node:child_process";',
        'await import("tensorlab/link/numba/dispatch/basic.js");',
        'spawn(process.execPath, ["late.mjs"], { stdio: "inherit", detached: process.env.DETACH === "1" }).unref();',
        "process.exit(0);",
        "",
      ].join("\n"),
    });
    for (const detach of ["0", "1"]) {
      const result = await audit(dir, ["--", "node", "leave.mjs"], { DETACH: detach });
      expect(result.stdout).toContain("[missing] PoolLayer on jax");
      expect(result.stdout).toMatch(/1 problem\(s\)\s+late\.mjs\n/);
      expect(result.stdout).not.toMatch(/^ok:/m);
      expect(result.stderr).not.toContain("could not write the audit record");
      expect(result.code).toBe(1);
    }
  });

  it("a signal while the audit waits for such a child: the audit still folds, prints its verdict and removes its run directory (it died, leaving them)", async () => {
    const dir = makeTree({
      ...app,
      "daemon.mjs": [
        'import { spawn } from "node:child_process";',
        'spawn(process.execPath, ["-e", "setTimeout(() => {}, 20000)"], { detached: true, stdio: "ignore" }).unref();',
        "",
      ].join("\n"),
    });
    const tmp = join(dir, "tmp");
    mkdirSync(tmp);
    const child = spawn(nodeBinary, [cli, "audit", "--", "node", "daemon.mjs"], {
      cwd: dir,
      env: { ...process.env, TMPDIR: tmp, NODE_OPTIONS: "" },
    });
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    const code = await new Promise<number | null>((done) => {
      child.on("exit", (c) => done(c));
      setTimeout(() => child.kill("SIGTERM"), 3000);
    });
    expect(out).toMatch(/still running when a signal stopped the audit/);
    expect(out).toMatch(/^not ok:/m);
    expect(code).toBe(1);
    expect(readdirSync(tmp)).toEqual([]);
    // The daemon itself is the program's: the audit never kills it.
    for (const line of out.match(/pid (\d+) \(node\) still running/g) ?? []) process.kill(Number(/\d+/.exec(line)?.[0]), "SIGKILL");
  });

  it("a child spawned with an environment of its own, and a worker given env: {}, still join the run and are judged", async () => {
    const dir = makeTree({
      ...app,
      "plain.mjs":
        'import { Dispatcher } from "dispatch-hook";\nconst show = new Dispatcher({ name: "show" });\nshow.register(Number, (n) => "show " + n);\nconsole.log(show.call(3));\n',
      "map-child.mjs":
        'import { register } from "dispatch-hook";\nclass Conv {}\nregister("mcpu", Conv, () => "conv");\nconst table = new Map();\nconsole.log("map child", table.has(Conv));\n',
      "stripped.mjs": [
        'import { execSync, spawnSync } from "node:child_process";',
        'import { Worker } from "node:worker_threads";',
        'await import("tensorlab/link/numba/dispatch/basic.js");',
        // Neither NODE_OPTIONS (the loader) nor the run directory reaches this child.
        'if (process.env.CHILD) spawnSync(process.execPath, ["backend.mjs", "numba"], { stdio: "inherit", env: { PATH: process.env.PATH } });',
        // The run directory reaches this child, but NODE_OPTIONS (the loader) is replaced.
        'if (process.env.OPTIONS_CHILD) spawnSync(process.execPath, ["backend.mjs", "numba"], { stdio: "inherit", env: { ...process.env, NODE_OPTIONS: "--max-old-space-size=200" } });',
        // Through a shell: the child's parent is the shell, not this process.
        'if (process.env.SHELL_CHILD) execSync("node backend.mjs numba", { stdio: "inherit", env: { PATH: process.env.PATH } });',
        // The loader replaced, in a child whose framework's table is a Map: nothing but a registration that waits says it needed one.
        'if (process.env.MAP_CHILD) spawnSync(process.execPath, ["map-child.mjs"], { stdio: "inherit", env: { ...process.env, NODE_OPTIONS: "--max-old-space-size=200" } });',
        // A child that uses dispatch-hook only as singledispatch: nothing the loader would serve.
        'if (process.env.PLAIN_CHILD) spawnSync(process.execPath, ["plain.mjs"], { stdio: "inherit", env: { PATH: process.env.PATH } });',
        // The worker keeps the loader (execArgv), but not the run directory.
        'if (process.env.WORKER) await new Promise((done) => new Worker(new URL("./backend.mjs", import.meta.url), { env: {}, argv: [process.env.WORKER] }).on("exit", done));',
        'console.log("stripped done");',
        "",
      ].join("\n"),
    });
    // env: {} drops NODE_OPTIONS for the worker too (Node reads a worker's NODE_OPTIONS from its env):
    // it runs without the loader, so the plugin's registration module never runs there.
    const worker = await audit(dir, ["--", "node", "stripped.mjs"], { WORKER: "numba" });
    expect(worker.stdout).toMatch(/\d+\s+2\s+\S+\s+0\s+1 problem\(s\)\s+worker thread 2 of pid/);
    expect(worker.stdout).toContain("this worker thread started without the audit's environment");
    expect(worker.code).toBe(1);
    const clean = await audit(dir, ["--", "node", "stripped.mjs"]);
    expect(clean.stdout).not.toContain("without the audit's environment");
    expect(clean.code).toBe(0);

    const shell = await audit(dir, ["--", "node", "stripped.mjs"], { SHELL_CHILD: "1" });
    expect(shell.stdout).toContain("this process started without the audit's environment");
    expect(shell.code).toBe(1);
    const plain = await audit(dir, ["--", "node", "stripped.mjs"], { PLAIN_CHILD: "1" });
    expect(plain.stdout).toContain("show 3");
    expect(plain.stdout).not.toContain("without the audit's environment");
    expect(plain.code).toBe(0);

    const options = await audit(dir, ["--", "node", "stripped.mjs"], { OPTIONS_CHILD: "1" });
    expect(options.stdout).toMatch(/1 problem\(s\)\s+backend\.mjs numba/);
    expect(options.stdout).toContain("no dispatch-hook loader is installed in this process, and tables of numba were made");
    expect(options.code).toBe(1);

    // Before: ok, exit code 0 ("1 waits for mcpu, which never loaded"), while the child's Map never got Conv.
    const map = await audit(dir, ["--", "node", "stripped.mjs"], { MAP_CHILD: "1" });
    expect(map.stdout).toContain("map child false");
    expect(map.stdout).toMatch(/1 problem\(s\)\s+map-child\.mjs/);
    expect(map.stdout).toContain(
      "no dispatch-hook loader is installed in this process of the audited run, and registrations wait for mcpu",
    );
    expect(map.code).toBe(1);

    const child = await audit(dir, ["--", "node", "stripped.mjs"], { CHILD: "1" });
    expect(child.stdout).toMatch(/1 problem\(s\)\s+backend\.mjs numba/);
    expect(child.stdout).toContain("this process started without the audit's environment");
    expect(child.code).toBe(1);
  });

  it("npm scripts run under the audit too, and `-- app.mjs` still runs this node", async () => {
    const dir = makeTree(app);
    const npm = await audit(dir, ["--", "npm", "run", "--silent", "check"], { FORKED: "jax" });
    expect(npm.code).toBe(1);
    expect(npm.stdout).toContain("[missing] PoolLayer on jax");
    const file = await audit(dir, ["--", "backend.mjs", "numba"]);
    expect(file.code).toBe(0);
    expect(file.stdout).toContain("ok: every registration landed");
  });

  it("--json-file leaves the program's output alone; --keep keeps the run directory, which is removed otherwise", async () => {
    const dir = makeTree({ ...app, "hello.mjs": 'console.log("hello from the program");\nawait import("./backend.mjs");\n' });
    const tmp = join(dir, "tmp");
    mkdirSync(tmp);
    const result = await audit(dir, ["--json-file", "out.json", "--", "hello.mjs", "numba"], { TMPDIR: tmp });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("hello from the program");
    expect((JSON.parse(readFileSync(join(dir, "out.json"), "utf8")) as RunAudit).ok).toBe(true);
    expect(readdirSync(tmp)).toEqual([]);
    const kept = await audit(dir, ["--keep", "--", "backend.mjs", "numba"], { TMPDIR: tmp });
    const where = /kept at (.+)$/m.exec(kept.stderr)?.[1] as string;
    expect(readdirSync(where).filter((f) => f.endsWith(".json"))).toHaveLength(1);
  });

  it("--json with --json-file: the document on stdout and in the file, the program's output on stderr", async () => {
    const dir = makeTree({ ...app, "hello.mjs": 'console.log("hello from the program");\nawait import("./backend.mjs");\n' });
    const result = await audit(dir, ["--json", "--json-file", "out.json", "--", "hello.mjs", "numba"]);
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as RunAudit;
    expect(printed.ok).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, "out.json"), "utf8"))).toEqual(printed);
    expect(result.stderr).toContain("hello from the program");
  });

  // Written from a new user's trial: terminate() runs no exit handler in the worker, so a worker pool
  // (piscina's destroy(), a process.exit() while workers run) failed every run audit, "wrote no record".
  it("workers ended with terminate(), as a pool ends them: judged by what they did, a miss in one still fails the run", async () => {
    const dir = makeTree({
      ...app,
      // A pool's worker: loads what it is asked for, says so, then waits for more work until terminated.
      "pool-worker.mjs": [
        'import { parentPort, workerData } from "node:worker_threads";',
        'if (workerData === "busy") { const { register } = await import("dispatch-hook"); register("numba", class Op {}, () => 0); parentPort.postMessage("ready"); for (;;); }',
        // A fact of the audit that is no registry's log: a backend named to assertComplete(), where a registration waits.
        // (Its record comes after the job's microtasks: ended before them, the worker is named as one whose record is out of date.)
        'if (workerData === "asserted") { const { register, registry } = await import("dispatch-hook"); register("jax", class Op {}, () => 0); await new Promise((done) => setTimeout(done, 50)); try { registry.assertComplete({ backends: ["jax"] }); } catch {} await null; }',
        'if (!["idle", "asserted"].includes(workerData)) await import("tensorlab/link/" + workerData + "/dispatch/basic.js");',
        'parentPort.postMessage("ready");',
        "setInterval(() => {}, 1000);",
      ].join("\n"),
      "pool.mjs": [
        'import { Worker } from "node:worker_threads";',
        'await import("tensorlab/link/numba/dispatch/basic.js");',
        'const start = (data) => new Promise((done) => { const w = new Worker(new URL("./pool-worker.mjs", import.meta.url), { workerData: data }); w.once("message", () => done(w)); });',
        'const workers = await Promise.all([start(process.env.WORKER_BACKEND ?? "numba"), start("idle")]);',
        "const codes = await Promise.all(workers.map((w) => w.terminate()));",
        'console.log("terminated", codes.join(" "));',
      ].join("\n"),
    });
    const clean = await audit(dir, ["--json", "--", "node", "pool.mjs"]);
    expect(clean.stderr).toContain("terminated 1 1");
    const report = JSON.parse(clean.stdout) as RunAudit;
    const threads = report.processes.map((p) => `${p.thread === 0 ? "main" : "worker"}: ${p.missing ?? p.report?.registrations.length}`);
    expect(threads.sort()).toEqual(["main: 1", "worker: 0", "worker: 1"]);
    expect(report.ok).toBe(true);
    expect(clean.code).toBe(0);

    // The terminated worker loaded jax, where the plugin registered nothing: the run fails for that, by name.
    const missed = await audit(dir, ["--", "node", "pool.mjs"], { WORKER_BACKEND: "jax" });
    expect(missed.stdout).toContain("[missing] PoolLayer on jax");
    expect(missed.stdout).not.toContain("wrote no audit record");
    expect(missed.code).toBe(1);

    const asserted = await audit(dir, ["--", "node", "pool.mjs"], { WORKER_BACKEND: "asserted" });
    expect(asserted.stdout).toMatch(/\[pending\] Op on jax .* the program named jax to assertComplete\(\)/);
    expect(asserted.code).toBe(1);

    // Terminated while it ran, after a change its record never got: never judged by the older record.
    const busy = await audit(dir, ["--", "node", "pool.mjs"], { WORKER_BACKEND: "busy" });
    expect(busy.stdout).toMatch(
      /\[no record\] pid \d+ \(worker thread \d+ of pid \d+\) changed after its last record, then ended without its exit handlers/,
    );
    expect(busy.stdout).toMatch(/^not ok: /m);
    expect(busy.code).toBe(1);
  });

  // Written from a review: a change made in an exit listener after the exit record marked the worker as
  // ended without its exit handlers, and a flush after it overwrote the exit code with none.
  it("a worker that changes something in an exit listener, after its exit record, still ends with its record and exit code", async () => {
    const dir = makeTree({
      ...app,
      "exit-worker.mjs": [
        'import { createRegistry } from "dispatch-hook";',
        'await import("tensorlab/link/numba/dispatch/basic.js");',
        "const late = createRegistry();",
        'process.on("exit", () => late.register("x", class Op {}, () => 0));',
        'if (process.env.EXIT_HOW === "exit") process.exit(0);',
      ].join("\n"),
      "exits.mjs": [
        'import { Worker } from "node:worker_threads";',
        'await new Promise((done) => new Worker(new URL("./exit-worker.mjs", import.meta.url)).on("exit", done));',
        'console.log("worker ended");',
      ].join("\n"),
    });
    for (const how of ["exit", "natural"]) {
      const result = await audit(dir, ["--json", "--", "node", "exits.mjs"], { EXIT_HOW: how });
      const report = JSON.parse(result.stdout) as RunAudit;
      const worker = report.processes.find((p) => p.thread !== 0);
      expect(worker?.missing).toBeUndefined();
      expect(worker?.exitCode).toBe(0);
      expect(report.ok).toBe(true);
      expect(result.code).toBe(0);
    }
  });

  it("a killed child, a truncated record and a foreign file are each named; never ok, never a crash; a new run does not fold an earlier one's records", async () => {
    const dir = makeTree({
      ...app,
      "killed.mjs": 'await import("tensorlab/link/numba/dispatch/basic.js");\nprocess.kill(process.pid, "SIGKILL");\n',
      "touch.mjs": 'import { writeFileSync } from "node:fs";\nwriteFileSync("ran", "");\n',
    });
    const killed = await audit(dir, ["--", "killed.mjs"]);
    expect(killed.code).toBe(137);
    expect(killed.stdout).toMatch(
      /\[no record\] pid \d+ \(killed\.mjs\) started, and wrote no audit record: it was killed by SIGKILL \(exit code 137\)/,
    );
    expect(killed.stdout).not.toMatch(/^ok/m);

    const runDir = join(dir, "run");
    expect((await audit(dir, ["--dir", "run", "--", "backend.mjs", "numba"])).code).toBe(0);
    const [record] = readdirSync(runDir).filter((f) => f.endsWith(".json"));
    const text = readFileSync(join(runDir, record as string), "utf8");
    writeFileSync(join(runDir, "1-0-truncated.json"), text.slice(0, text.length / 2));
    writeFileSync(join(runDir, "2-0-foreign.json"), JSON.stringify({ format: "something-else", version: 1 }));
    writeFileSync(join(runDir, "3-0-future.json"), JSON.stringify({ format: "dispatch-hook/audit-record", version: 9 }));
    writeFileSync(join(runDir, "notes.txt"), "left by someone");
    const folded = await audit(dir, ["--dir", "run"]);
    expect(folded.code).toBe(1);
    expect(folded.stdout).toContain("[unreadable] 1-0-truncated.json in the run directory: it is truncated or corrupt");
    expect(folded.stdout).toContain("[unreadable] 2-0-foreign.json in the run directory: it is not a dispatch-hook audit record");
    expect(folded.stdout).toContain("[unreadable] 3-0-future.json in the run directory: it is a record of version 9");
    expect(folded.stdout).toContain("[unreadable] notes.txt in the run directory: it is not a dispatch-hook file");
    expect(folded.stdout).toContain("not ok: 4 unreadable file(s) in the run directory");
    // A command run into a directory that holds an earlier run's records would fold them as its own: refused, nothing runs.
    const again = await audit(dir, ["--dir", "run", "--", "touch.mjs"]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/\[ERR_DISPATCH_HOOK_AUDIT_DIR\] the run directory .*run already holds 6 file\(s\)/);
    expect(existsSync(join(dir, "ran"))).toBe(false);
    // A foreign file alone is refused before the command starts too (it ran, then failed the run).
    const foreign = join(dir, "foreign-only");
    mkdirSync(foreign);
    writeFileSync(join(foreign, "junk.txt"), "junk");
    const refused = await audit(dir, ["--dir", "foreign-only", "--", "touch.mjs"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /\[ERR_DISPATCH_HOOK_AUDIT_DIR\] the run directory .*foreign-only already holds 1 file\(s\) \(junk\.txt\)/,
    );
    expect(existsSync(join(dir, "ran"))).toBe(false);
  });

  it("a record of the right format and version whose fields have another shape is named unreadable, in text and in JSON alike; never a crash", async () => {
    const dir = makeTree(app);
    expect((await audit(dir, ["--dir", "run", "--", "backend.mjs", "numba"])).code).toBe(0);
    const runDir = join(dir, "run");
    const [name] = readdirSync(runDir).filter((f) => f.endsWith(".json"));
    const record = JSON.parse(readFileSync(join(runDir, name as string), "utf8"));
    expect(record.report.registrations.length).toBeGreaterThan(0);
    // Each edit crashed the text report with a TypeError, while --json said ok.
    const edits: Record<string, (r: typeof record) => void> = {
      "1-0-a": (r) => {
        r.report.registrations = [{}];
      },
      "2-0-b": (r) => {
        r.argv = null;
      },
      "3-0-c": (r) => {
        r.report.registrations[0].tables = null;
      },
      "4-0-d": (r) => {
        r.report.registrations[0].origin = null;
      },
    };
    for (const [stem, edit] of Object.entries(edits)) {
      const copy = structuredClone(record);
      edit(copy);
      writeFileSync(join(runDir, `${stem}.json`), JSON.stringify(copy));
    }
    const text = await audit(dir, ["--dir", "run"]);
    expect(text.stderr).not.toContain("TypeError");
    for (const stem of Object.keys(edits))
      expect(text.stdout).toContain(`[unreadable] ${stem}.json in the run directory: it is a record with missing fields`);
    expect(text.code).toBe(1);
    const json = await audit(dir, ["--dir", "run", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false });
    expect(json.code).toBe(1);
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`${signal} sent to the audit reaches the program; the audit folds what was recorded, names the program's end, and removes its run directory`, async () => {
      const dir = makeTree({
        ...app,
        "long.mjs": [
          'import { writeFileSync } from "node:fs";',
          'await import("tensorlab/link/numba/dispatch/basic.js");',
          'writeFileSync("started.json", JSON.stringify({ pid: process.pid, dir: process.env.DISPATCH_HOOK_AUDIT_DIR }));',
          "setTimeout(() => {}, 20_000);",
          "",
        ].join("\n"),
      });
      const child = spawn(nodeBinary, [cli, "audit", "--", "long.mjs"], { cwd: dir, env: { ...process.env, NODE_OPTIONS: "" } });
      let stdout = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
      });
      const closed = new Promise<number | null>((done) => child.on("close", (code) => done(code)));
      const startedFile = join(dir, "started.json");
      // Until the file is there and whole: writeFileSync() creates it empty before it writes (CI once read it in between).
      const read = () => {
        try {
          return JSON.parse(readFileSync(startedFile, "utf8")) as { pid: number; dir: string };
        } catch {
          return undefined;
        }
      };
      let started = read();
      for (let i = 0; i < 300 && started === undefined; i++) {
        await new Promise((done) => setTimeout(done, 50));
        started = read();
      }
      if (started === undefined) throw new Error("the program never wrote started.json");
      expect(existsSync(started.dir)).toBe(true);
      child.kill(signal);
      // Before: the audit died at once (143 or 130) with no report, the program ran on, and the run directory stayed.
      const code = await closed;
      const number = signal === "SIGTERM" ? 15 : 2;
      expect(code).toBe(128 + number);
      expect(stdout).toMatch(
        new RegExp(`\\[no record\\] pid ${started.pid} \\(long\\.mjs\\) started, and wrote no audit record: it was killed by ${signal}`),
      );
      expect(stdout).not.toMatch(/^ok/m);
      expect(() => process.kill(started.pid, 0)).toThrow();
      expect(existsSync(started.dir)).toBe(false);
    });
  }

  // Written from a review of the signal forwarding: at a terminal, Ctrl-C reaches the whole foreground group, the
  // program included, and a second SIGINT sent on by the audit force-quit a program that shuts down gracefully.
  const hasScript = spawnSync("script", ["--version"]).status === 0;
  it.skipIf(!hasScript)(
    "Ctrl-C at a terminal reaches the program once: it shuts down gracefully, writes its record, and the audit folds it",
    async () => {
      const dir = makeTree({
        ...app,
        "graceful.mjs": [
          'import { appendFileSync, writeFileSync } from "node:fs";',
          'await import("tensorlab/link/numba/dispatch/basic.js");',
          "let count = 0;",
          'process.on("SIGINT", () => {',
          "  count++;",
          '  appendFileSync("signals.log", `SIGINT ${count}\\n`);',
          "  if (count === 1) setTimeout(() => process.exit(0), 300);",
          '  else process.kill(process.pid, "SIGKILL");',
          "});",
          'writeFileSync("started", "");',
          "setTimeout(() => {}, 20_000);",
          "",
        ].join("\n"),
      });
      // script(1) runs the audit on a terminal of its own; a Ctrl-C typed there is sent to its foreground group.
      const command = `${JSON.stringify(nodeBinary)} ${JSON.stringify(cli)} audit -- graceful.mjs`;
      const terminal = spawn("script", ["-qfec", command, "/dev/null"], { cwd: dir, env: { ...process.env, NODE_OPTIONS: "" } });
      let stdout = "";
      terminal.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
      });
      const closed = new Promise<number | null>((done) => terminal.on("close", (code) => done(code)));
      for (let i = 0; i < 300 && !existsSync(join(dir, "started")); i++) await new Promise((done) => setTimeout(done, 50));
      terminal.stdin.write("\x03");
      await closed;
      expect(readFileSync(join(dir, "signals.log"), "utf8")).toBe("SIGINT 1\n");
      expect(stdout).toMatch(/pid \d+ \(graceful\.mjs\):/);
      expect(stdout).toMatch(/PoolLayer\s+applied/);
      expect(stdout).toContain("ok: every registration landed");
      expect(stdout).not.toContain("[no record]");
    },
  );

  it("a record whose report says ok beside a problem is named unreadable, and the run fails, in text and in JSON alike", async () => {
    const dir = makeTree(app);
    expect((await audit(dir, ["--dir", "run", "--", "backend.mjs", "numba"])).code).toBe(0);
    const runDir = join(dir, "run");
    const [name] = readdirSync(runDir).filter((f) => f.endsWith(".json"));
    const record = JSON.parse(readFileSync(join(runDir, name as string), "utf8"));
    // Before: the row said "ok", the verdict "not ok: 1 problem(s) in 0 process(es)", and the exit code was 0 (--json: ok true).
    record.report.ok = true;
    record.report.problems = [{ kind: "missing", backend: "numba", op: "Conv", message: "Conv was expected on numba" }];
    writeFileSync(join(runDir, name as string), JSON.stringify(record));
    const text = await audit(dir, ["--dir", "run"]);
    expect(text.stdout).toContain(`[unreadable] ${name} in the run directory: its report says ok beside 1 problem(s)`);
    expect(text.stdout).not.toMatch(/^ok/m);
    expect(text.code).toBe(1);
    const json = await audit(dir, ["--dir", "run", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false });
    expect(json.code).toBe(1);
  });

  it("a run directory that cannot be written stops the command before it starts, naming the path", async () => {
    const dir = makeTree({
      ...app,
      "a-file": "not a directory",
      "touch.mjs": 'import { writeFileSync } from "node:fs";\nwriteFileSync("ran", "");\n',
    });
    const result = await audit(dir, ["--dir", "a-file/run", "--", "touch.mjs"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`[ERR_DISPATCH_HOOK_AUDIT_DIR] cannot write the run directory ${join(dir, "a-file/run")}`);
    expect(existsSync(join(dir, "ran"))).toBe(false);
  });

  // Node's recursive mkdirSync retries forever where mkdir fails with ENOENT under an existing parent.
  it.runIf(existsSync("/proc/self"))("a run directory under /proc is refused, not waited on forever", async () => {
    const dir = makeTree({ ...app, "touch.mjs": 'import { writeFileSync } from "node:fs";\nwriteFileSync("ran", "");\n' });
    const result = await audit(dir, ["--dir", "/proc/dispatch-hook-run/x", "--", "touch.mjs"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("[ERR_DISPATCH_HOOK_AUDIT_DIR] cannot write the run directory /proc/dispatch-hook-run/x");
    expect(existsSync(join(dir, "ran"))).toBe(false);
  });
});

describe("exit codes", () => {
  it("a record has the exit code a program sets in an exit listener of its own after dispatch-hook's (as Jest's command line does)", async () => {
    const dir = makeTree({
      ...app,
      "late.mjs": 'await import("tensorlab/link/numba/dispatch/basic.js");\nprocess.on("exit", () => {\n  process.exitCode = 3;\n});\n',
    });
    const result = await audit(dir, ["--json", "--", "late.mjs"]);
    const report = JSON.parse(result.stdout) as RunAudit & { exitCode: number };
    expect(report.processes.map((p) => p.exitCode)).toEqual([3]);
    expect(result.code).toBe(3);
  });
});

describe("helpers outside the project", () => {
  // A test or an app that starts node in a temporary directory: the loader comes with NODE_OPTIONS,
  // and finds nothing declared there. It made no table: nothing there needed the loader.
  const helper =
    'execFileSync(process.execPath, ["-e", "console.log(\'helper ok\')"], { cwd: mkdtempSync(join(tmpdir(), "helper-")), stdio: "inherit" });';
  const tree = (body: string) => ({
    ...app,
    "helped.mjs": [
      'import { execFileSync } from "node:child_process";',
      'import { mkdtempSync } from "node:fs";',
      'import { tmpdir } from "node:os";',
      'import { join } from "node:path";',
      'await import("tensorlab/link/numba/dispatch/basic.js");',
      body,
      "",
    ].join("\n"),
  });

  it("a helper started in a directory that declares nothing does not fail the run, nor a strict audit's child", async () => {
    const dir = makeTree(tree(helper));
    const result = await audit(dir, ["--", "helped.mjs"]);
    expect(result.stdout).toContain("helper ok");
    expect(result.stdout).not.toContain("watches nothing");
    expect(result.stdout).toMatch(/^ok: every registration landed, in 1 of 2 process\(es\)$/m);
    expect(result.code).toBe(0);
    const strict = await run(dir, ["--import", join(repoRoot, "loader.mjs"), "helped.mjs"], {
      DISPATCH_HOOK_AUDIT: "strict",
      NODE_OPTIONS: `--import=${join(repoRoot, "loader.mjs")}`,
    });
    expect(strict.stdout).toContain("helper ok");
    expect(strict.stderr).not.toContain("watches nothing");
    expect(strict.code).toBe(0);
  });

  it("a helper's worker thread is outside too; an app a launcher starts in its own directory keeps the strict rule", async () => {
    const worker =
      'execFileSync(process.execPath, ["-e", "new (require(\'node:worker_threads\').Worker)(\'1\', { eval: true })"], { cwd: mkdtempSync(join(tmpdir(), "helper-")), stdio: "inherit" });';
    const helped = await audit(makeTree(tree(worker)), ["--", "helped.mjs"]);
    expect(helped.stdout).not.toContain("watches nothing");
    expect(helped.code).toBe(0);
    // As npm start does: a launcher that ran the loader starts the app in the same directory, where nothing is declared.
    const dir = makeTree({
      "package.json": JSON.stringify({ name: "plain" }),
      "launcher.mjs": [
        'import { spawnSync } from "node:child_process";',
        'const { status } = spawnSync(process.execPath, ["main.mjs"], { stdio: "inherit" });',
        'console.log("main exited " + status);',
      ].join("\n"),
      "main.mjs": 'console.log("ran");\n',
    });
    const loader = `--import=${join(repoRoot, "loader.mjs")}`;
    const launched = await run(dir, ["launcher.mjs"], { DISPATCH_HOOK_AUDIT: "strict", NODE_OPTIONS: loader });
    expect(launched.stdout).toContain("ran");
    expect(launched.stdout).toContain("main exited 1");
    expect(launched.stderr.match(/found no backend declaration, so it watches nothing/g)).toHaveLength(2);
  });

  it("a helper in a fixture package of the project, run from the project's directory, does not fail the run either", async () => {
    const dir = makeTree({
      ...tree('execFileSync(process.execPath, ["fixtures/helper/helper.mjs"], { stdio: "inherit" });'),
      "fixtures/helper/package.json": JSON.stringify({ name: "helper-fixture", type: "module" }),
      "fixtures/helper/helper.mjs": 'console.log("helper ok");\n',
    });
    const result = await audit(dir, ["--", "helped.mjs"]);
    expect(result.stdout).toContain("helper ok");
    expect(result.stdout).not.toContain("watches nothing");
    expect(result.code).toBe(0);
  });

  it("the first process of a tree is never a helper, even started from another directory than its package's", async () => {
    const dir = makeTree({ "app/package.json": JSON.stringify({ name: "plain" }), "app/main.mjs": 'console.log("ran");\n' });
    const strict = await run(dir, ["--import", join(repoRoot, "loader.mjs"), "app/main.mjs"], { DISPATCH_HOOK_AUDIT: "strict" });
    expect(strict.stdout).toContain("ran");
    expect(strict.stderr).toContain("found no backend declaration, so it watches nothing");
    expect(strict.code).toBe(1);
    // The command's first process is the first of its tree too, whatever the environment held.
    const audited = await audit(dir, ["--", "app/main.mjs"], { DISPATCH_HOOK_LOADER_CWD: "/" });
    expect(audited.stdout).toContain("found no backend declaration, so it watches nothing");
    expect(audited.code).toBe(1);
  });

  it("one that registers there, where the loader watches nothing, still fails the run", async () => {
    const dir = makeTree({
      ...tree('execFileSync(process.execPath, ["helper.mjs"], { cwd: "elsewhere", stdio: "inherit" });'),
      "elsewhere/package.json": JSON.stringify({ name: "elsewhere" }),
      "elsewhere/helper.mjs": [
        `import { register } from ${JSON.stringify(join(repoRoot, "dist/index.js"))};`,
        'register("numba", class Pool {}, () => "pool");',
        'console.log("helper ok");',
      ].join("\n"),
    });
    const result = await audit(dir, ["--", "helped.mjs"]);
    expect(result.stdout).toContain("helper ok");
    expect(result.stdout).toContain("found no backend declaration, so it watches nothing");
    expect(result.code).toBe(1);
  });
});

describe("registrations that wait are never 'every registration landed'", () => {
  // ml-ops registers PoolLayer for numba (declared); the program registers it for jax, whose
  // dispatch module never loads.
  const waiting = {
    ...app,
    "never.mjs": [
      'import { register, registry } from "dispatch-hook";',
      'import { PoolLayer } from "ml-ops";',
      'register("jax", PoolLayer, () => "pooled");',
      "try { registry.assertComplete({ backends: process.argv.slice(2) }); } catch {}",
      'if (process.env.NUMBA) await import("tensorlab/link/numba/dispatch/basic.js");',
      "",
    ].join("\n"),
  };

  it("a backend named to assertComplete() whose registrations wait and which has no table fails the run, though the program caught the error", async () => {
    const dir = makeTree(waiting);
    const result = await audit(dir, ["--", "never.mjs", "jax"]);
    expect(result.stdout).toContain("[pending] PoolLayer on jax");
    expect(result.stdout).toContain("the program named jax to assertComplete()");
    expect(result.stdout).toMatch(/^not ok: 1 problem\(s\) in 1 process\(es\)$/m);
    expect(result.stdout).not.toContain("every registration landed");
    expect(result.code).toBe(1);

    const json = await audit(dir, ["--json", "--", "never.mjs", "jax"]);
    const document = JSON.parse(json.stdout) as RunAudit;
    expect(document.ok).toBe(false);
    expect(document.processes[0]?.report?.problems.map((p) => [p.kind, p.backend, p.op])).toEqual([["pending", "jax", "PoolLayer"]]);
    expect(json.code).toBe(1);
  });

  it("when none landed anywhere, nothing was checked: the process's line and the run's last line say so, and the run fails", async () => {
    const dir = makeTree(waiting);
    const result = await audit(dir, ["--", "never.mjs"]);
    expect(result.stdout).toMatch(/^nothing was checked: no registration landed; 1 waits for jax, which never loaded$/m);
    expect(result.stdout).not.toMatch(/^ok:/m);
    expect(result.code).toBe(1);
  });

  it("unasked, they pass, and the last line says how many wait, for which backends", async () => {
    const dir = makeTree(waiting);
    const result = await audit(dir, ["--", "never.mjs"], { NUMBA: "1" });
    expect(result.stdout).toMatch(
      /^ok: every registration on a backend that loaded landed, in 1 process\(es\); 1 waits for jax, which never loaded$/m,
    );
    expect(result.stdout).not.toContain("every registration landed");
    expect(result.code).toBe(0);
  });
});
