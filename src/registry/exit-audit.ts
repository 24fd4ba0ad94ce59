/**
 * The exit audit (DISPATCH_HOOK_AUDIT): one per thread, speaking for every registry of every copy
 * of dispatch-hook in it, and for the loaders (see thread-audit.ts).
 */
import { fs, timers, workerThreads } from "../builtins.js";
import { hostAdapters } from "../host-adapters.js";
import { hub } from "../hub.js";
import type { AuditReport } from "./audit-events.js";
import { formatReport } from "./audit-format.js";
import { DispatchHookError } from "./errors.js";
import { type RunLocation, runLocation, startRecord, writeRecord } from "./run-records.js";
import { watchChildren } from "./spawned.js";
import { threadAudit, unannounced } from "./thread-audit.js";
import { recordWhileRunning } from "./worker-record.js";

/** DISPATCH_HOOK_AUDIT: "strict" fails the process on problems, "report" prints the table, "off" is silent. */
export type AuditMode = "strict" | "report" | "off";

const on = new Set(["1", "true", "on", "yes"]);
const off = new Set(["", "0", "false", "off", "no"]);

/** The mode `value` names, in any case; anything unknown is off, with a warning unless `warn` is false (for a caller that asks often). */
export function parseAuditMode(value: string | undefined, warn = true): AuditMode {
  const word = value?.trim().toLowerCase();
  if (word === undefined || off.has(word)) return "off";
  if (word === "strict" || word === "report") return word;
  if (on.has(word)) return "report";
  if (warn) {
    process.emitWarning(
      `DISPATCH_HOOK_AUDIT=${JSON.stringify(value)} is not a value it accepts: "strict"; "report" (or 1, true, on, yes); "off" (or 0, false, no, or empty). The audit stays off.`,
      { code: "DISPATCH_HOOK_AUDIT_MODE" },
    );
  }
  return "off";
}

/** The run this thread writes its record into, looked up once (see runLocation()). */
let run: RunLocation | undefined | null = null;
const currentRun = (): RunLocation | undefined => {
  if (run === null) run = runLocation();
  return run;
};

/** Whether this process audits: only then does a registry capture call sites (costly: bench/RESULTS.md). */
export function auditRunning(): boolean {
  return parseAuditMode(process.env.DISPATCH_HOOK_AUDIT, false) !== "off" || currentRun() !== undefined;
}

/** What the audit says at exit: the table in report mode, or when strict mode finds a problem, which also fails the exit code. */
export function auditVerdict(report: AuditReport, mode: AuditMode): { text: string; fail: boolean } {
  if (mode === "off") return { text: "", fail: false };
  const fail = mode === "strict" && !report.ok;
  const text = mode === "report" || fail ? `dispatch-hook audit (${mode}):\n${formatReport(report)}\n` : "";
  return { text, fail };
}

export interface AuditAtExitOptions {
  readonly mode: AuditMode;
  readonly dir?: string | undefined; // DISPATCH_HOOK_AUDIT_DIR: the run directory, where each thread writes its record
  /** The run directory came from a parent's word, not the environment: the environment was replaced on the way. */
  readonly joined?: boolean;
}

/**
 * No loader in the thread, beside tables of backends that never reached dispatch-hook: plugins'
 * registration modules could not run for them. Said in a run (the command line put the loader in
 * NODE_OPTIONS, so a process without it lost it on the way, perhaps with the whole environment:
 * `joined`), and elsewhere when the program used such a table: whether a plugin should have
 * registered into it cannot be known without the loader's reading of the declarations.
 */
function withoutLoader(report: AuditReport, inRun: boolean, joined: boolean): AuditReport {
  if (hub().hasLoader()) return report;
  // Outside a run, a table the program used, or, where no table reached dispatch-hook at all (no
  // framework announced one) and no host adapter serves the thread, one a registration waits for: not
  // one a framework made up front and left.
  const waiting = new Set(report.registrations.filter((r) => r.state === "pending").map((r) => r.backend));
  // A backend set's backends ("fast [ml]": names have no spaces otherwise) are no framework's tables.
  const unserved = hostAdapters().size === 0 && !report.backends.some((b) => b.loaded && !b.backend.includes(" "));
  const tables = unannounced().filter((t) => inRun || t.used || (unserved && waiting.has(t.backend)));
  // In a run, which gave every process the loader, registrations waiting in a thread that lost it: no table (a Map, say)
  // could tell them it loaded, so nothing tells whether the backend loaded here and missed them.
  // Outside a run, the same for backends the project's package.json files declare (a pattern's module must exist).
  const framework = unserved && tables.length === 0 ? [...waiting].filter((b) => !b.includes(" ")) : [];
  const declared = inRun || framework.length === 0 ? undefined : attemptDeclared(framework);
  const stranded = inRun ? framework : [...(declared?.keys() ?? [])];
  if (tables.length === 0 && stranded.length === 0) return report;
  const made = inRun ? "made" : tables.some((t) => t.used) ? "used" : "made, with registrations waiting for them";
  const where = workerThreads().isMainThread ? "process" : "worker thread";
  const names = [...new Set([...tables.map((t) => t.backend), ...stranded])].sort().join(", ");
  const fix =
    "Start node with --import dispatch-hook/loader.mjs (keep it in NODE_OPTIONS when you set that for a child), or load the code through a host adapter (dispatch-hook/vite, /esbuild, /jest).";
  const message = joined
    ? `this ${where} started without the audit's environment: its parent replaced it (${where === "process" ? "a spawn or fork" : "a worker"} with env: { … }), so neither the run directory nor the loader in NODE_OPTIONS reached it, and its plugins' registration modules could not run. Pass the environment on (env: { ...process.env, … }).`
    : stranded.length > 0
      ? `no dispatch-hook loader is installed in this ${where}${inRun ? " of the audited run" : ""}, and registrations wait for ${names}${declared === undefined ? "" : `, which the project declares (${[...declared.values()].join("; ")})`}: without it no table of ${names} can say that it loaded, so nothing tells whether one loaded here and missed them, and no plugin's registration module can run. ${fix}`
      : `no dispatch-hook loader is installed in this ${where}, and tables of ${names} were ${made}: without it no plugin's registration module can run for them, and nothing can tell whether one should have. ${fix}`;
  return { ...report, ok: false, problems: [...report.problems, { kind: "no-loader", backend: "-", op: "-", id: undefined, message }] };
}

/**
 * Which of some backends the project's package.json files declare (hooks/declared-backends.ts), given
 * by the main entry, which arms the exit audit where no loader is installed. Kept in this copy: giving
 * it to the hub at import would make the hub before the program runs a line.
 */
type Declared = (backends: readonly string[]) => ReadonlyMap<string, string>;
let declaredOf: Declared | undefined;
export function provideDeclared(read: Declared): void {
  declaredOf = read;
}
/** Never a throw in an exit handler: declarations that cannot be read say nothing here. */
function attemptDeclared(backends: readonly string[]): ReadonlyMap<string, string> | undefined {
  try {
    return declaredOf?.(backends);
  } catch {
    return undefined;
  }
}

/** Arranges the thread's exit audit, once per thread and realm whichever copy asks: its record, and its table. */
export function auditAtExit(options: AuditAtExitOptions): void {
  const { mode } = options;
  let dir = options.dir === "" ? undefined : options.dir;
  if (mode === "off" && dir === undefined) return;
  if (!hub().claimExit()) return;
  if (dir !== undefined && !startRecord(dir)) dir = undefined;
  if (dir !== undefined) watchChildren(dir);
  const runDir = dir;
  const stopRunning =
    runDir === undefined
      ? () => {}
      : recordWhileRunning(runDir, () => writeRecord(runDir, withoutLoader(threadAudit(), true, options.joined === true), null, entry()));
  recordAfterTestFile();
  const atExit = (given: number) => {
    // What an earlier exit listener set (the code given is the one the exit began with).
    const code = process.exitCode === undefined || process.exitCode === null ? given : Number(process.exitCode);
    const report = withoutLoader(threadAudit(), dir !== undefined, options.joined === true);
    stopRunning(); // this record is the last: a change after it (another exit listener's) marks nothing
    if (dir !== undefined) {
      try {
        writeRecord(dir, report, code, entry());
      } catch (error) {
        fs.writeSync(
          2,
          `dispatch-hook: could not write the audit record into ${dir}: ${error instanceof Error ? error.message : String(error)}\n`,
        );
      }
    }
    // A test runner's worker that judged each test file: only what no file's verdict said (see recordTestFile).
    if (!unsaid(report)) return;
    const { text, fail } = auditVerdict(report, mode);
    // Synchronous: the process is exiting.
    if (text !== "") fs.writeSync(2, text);
    if (fail && code === 0) process.exitCode = 1;
  };
  process.on("exit", atExit);
  // Last of the exit listeners when the loop runs dry: a program that sets its exit code in one of
  // its own (Jest's command line does) has it in the record.
  process.on("beforeExit", () => {
    process.removeListener("exit", atExit);
    process.on("exit", atExit);
  });
}

/**
 * The exit audit the environment asks for, armed by the loader or the main entry: workers never run
 * the loader's `--import`, and a program may have no loader.
 */
export function auditFromEnvironment(): void {
  const mode = process.env.DISPATCH_HOOK_AUDIT;
  const found = currentRun();
  if (mode || found !== undefined) auditAtExit({ mode: parseAuditMode(mode), dir: found?.dir, joined: found?.joined === true });
}

/**
 * Whether a report has anything a verdict of this realm has not said: always, before its first; after
 * it (a test file's), only a problem not said (by kind, backend, op type and registration: its words
 * may change as more loads). Marks what it says.
 */
function unsaid(report: AuditReport): boolean {
  const state = hub().shared("judged-test-files@1", () => ({ judged: false, said: new Set<string>() }));
  const keys = report.problems.map((p) => `${p.kind}\0${p.backend}\0${p.op}\0${p.id}`);
  const fresh = !state.judged || keys.some((key) => !state.said.has(key));
  state.judged = true;
  for (const key of keys) state.said.add(key);
  return fresh;
}

/** The test files this realm ran, when a test runner's worker wrote its record after them: the record's `entry`. */
const testFiles = () => hub().shared("test-files", () => new Set<string>());
const entry = () => [...testFiles()].join(", ") || undefined;

/**
 * For test runners, which stop workers without their exit handlers: writes this realm's record now,
 * naming the test file; and under DISPATCH_HOOK_AUDIT, gives the verdict its exit would have given,
 * where the runner shows it: `report` prints the table, `strict` fails the file from its hook (`judge`
 * "fail"), or, where there is none, prints the table (`judge` "print").
 */
function recordTestFile(testFile: string | undefined, judge: "fail" | "print"): void {
  const dir = currentRun()?.dir;
  auditFromEnvironment();
  if (testFile !== undefined) testFiles().add(testFile);
  const audit = threadAudit();
  if (dir)
    try {
      writeRecord(dir, audit, null, entry());
    } catch (error) {
      process.emitWarning(
        `dispatch-hook cannot write its audit record into DISPATCH_HOOK_AUDIT_DIR=${dir} (${error instanceof Error ? error.message : String(error)}).`,
        { code: "DISPATCH_HOOK_AUDIT_RECORD" },
      );
    }
  const mode = parseAuditMode(process.env.DISPATCH_HOOK_AUDIT, false);
  if (mode === "off") return;
  const report = withoutLoader(audit, dir !== undefined, false);
  // A realm that runs several files (Vitest's vm pools, isolate: false) judges each problem once: a
  // later file is not failed for an earlier one's, nor the table printed again with nothing new.
  if (!unsaid(report)) return;
  const { text, fail } = auditVerdict(report, mode);
  if (fail && judge === "fail") throw new DispatchHookError("ERR_DISPATCH_INCOMPLETE", `${testFile ?? "this test file"}: ${text}`);
  if (text !== "") process.stderr.write(text);
}

interface TestRunner {
  readonly afterAll?: (fn: () => void) => void;
  readonly expect?: { readonly getState?: () => { readonly testPath?: string; readonly currentTestName?: string } };
}

/**
 * Records after each test file too, under a runner whose `afterAll` is global (Jest: its per-file
 * `process` runs no exit handler) or given (Vitest's, from its setup file).
 */
export function recordAfterTestFile(runner: TestRunner = globalThis as TestRunner): void {
  if (typeof runner.afterAll !== "function" || (!currentRun() && parseAuditMode(process.env.DISPATCH_HOOK_AUDIT, false) === "off")) return;
  // Vitest's global afterAll (globals: true): its setup file (vitest-record.ts) gives Vitest's own.
  if (runner === globalThis && "__vitest_worker__" in globalThis) return;
  // Jest's global runner only: Vitest's setup file never runs inside a test (and in one vm context
  // shared by a worker's files, Vitest's state still names the last file's last test).
  const state = runner === globalThis && process.env.JEST_WORKER_ID !== undefined ? runner.expect?.getState?.() : undefined;
  if (state?.currentTestName !== undefined) {
    // First loaded inside a test, where a hook cannot be added (Jest fails the test): the record is
    // written once the code that loaded it has run, registration modules and their awaits on
    // promises included: on the next turn of Node's own timers, which Jest's fake timers do not replace.
    timers().setImmediate(() => recordTestFile(state.testPath, "print"));
    process.emitWarning(
      "dispatch-hook was first loaded inside a test, so its audit for this file (its record, and DISPATCH_HOOK_AUDIT's verdict, which cannot fail the file from here) is taken right after, and misses what later tests register. Load it before the tests run: add it to Jest's setupFilesAfterEnv, or require it at the top of the file.",
      { code: "DISPATCH_HOOK_AUDIT_RECORD_EARLY" },
    );
    return;
  }
  try {
    runner.afterAll(() => {
      recordTestFile(runner.expect?.getState?.().testPath, "fail");
    });
  } catch {
    // Inside a test: the exit record stands.
  }
}
