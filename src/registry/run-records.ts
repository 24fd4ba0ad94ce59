/**
 * A run's records: each thread that audits writes its own into the run directory (DISPATCH_HOOK_AUDIT_DIR),
 * `<id>.started` when it starts and `<id>.json` when it (or its test file) ends, so that a thread that
 * never wrote its record is seen as such. The command line and the reporters fold them (run-fold.ts).
 */
import { crypto, fs, os, path, workerThreads } from "../builtins.js";
import { hub } from "../hub.js";
import type { AuditReport } from "./audit-events.js";

export const runDirVariable = "DISPATCH_HOOK_AUDIT_DIR";
export const recordFormat = "dispatch-hook/audit-record";

/** Who wrote a record. */
export interface RecordWriter {
  readonly pid: number;
  readonly ppid: number;
  /** 0 for a process's main thread, else the worker thread's id. */
  readonly thread: number;
  /** The program: the main module's path (a test runner's worker: the test file), or `null` (a worker, `node -e`). */
  readonly entry: string | null;
  readonly argv: readonly string[];
  readonly node: string;
}

/** One thread's record, as it writes it. Versioned: a reader refuses a version it does not know. */
export interface ProcessRecord extends RecordWriter {
  readonly format: typeof recordFormat;
  readonly version: 1;
  /** The exit code it ended with; `null` when it wrote before its end (a test runner's worker, after a file). */
  readonly exitCode: number | null;
  readonly report: AuditReport;
}

function writer(): RecordWriter {
  const { threadId } = workerThreads();
  return {
    pid: process.pid,
    ppid: process.ppid,
    thread: threadId,
    entry: threadId === 0 ? (process.argv[1] ?? null) : null,
    argv: process.argv.slice(2),
    node: process.versions.node,
  };
}

/** The file stem of this realm's records: one per thread and realm, whichever copy writes it. */
function stem(): string {
  return hub().shared("run-record", () => `${process.pid}-${workerThreads().threadId}-${crypto().randomBytes(4).toString("hex")}`);
}

/**
 * Where an audited process leaves word of its run, for a child or a worker whose environment was replaced
 * (a spawn with `env: { PATH }`, a worker with `env: {}`): one file per process, named by its pid,
 * holding the run directory. A fixed place (not TMPDIR), since the environment is what such a child lost.
 */
function notesDirectory(): string {
  const base = process.platform === "win32" ? os().tmpdir() : "/tmp";
  return path.join(base, `dispatch-hook-runs-${typeof process.getuid === "function" ? process.getuid() : "user"}`);
}

/** The parent, then its ancestors where the system says (Linux's /proc): a shell between (execSync, npm scripts) is passed over. */
function ancestors(): number[] {
  const out = [process.ppid];
  for (let i = 0; i < 4 && process.platform === "linux"; i++) {
    try {
      const stat = fs.readFileSync(`/proc/${out[out.length - 1]}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!(parent > 1)) break;
      out.push(parent);
    } catch {
      break;
    }
  }
  return out;
}

/** The run directory this thread writes into, and whether it learned it from a parent's word rather than the environment. */
export interface RunLocation {
  readonly dir: string;
  readonly joined: boolean;
}

/**
 * The environment's run directory; else the one this process's main thread (for a worker) or its
 * parent process announced, if that directory still exists. One or two file lookups, only where the
 * environment names none.
 */
export function runLocation(): RunLocation | undefined {
  const given = process.env[runDirVariable];
  if (given) return { dir: given, joined: false };
  // One lookup for a process no audit runs around: no notes at all.
  const notes = notesDirectory();
  if (!fs.existsSync(notes)) return undefined;
  // Its own pid first: a worker's main thread. (A main thread has written none yet.)
  for (const pid of [process.pid, ...ancestors()]) {
    const file = path.join(notes, String(pid));
    if (!fs.existsSync(file)) continue;
    try {
      // Only word this user left: another user's file is never followed.
      if (typeof process.getuid === "function" && fs.statSync(file).uid !== process.getuid()) continue;
      const dir = fs.readFileSync(file, "utf8");
      if (dir !== "" && fs.statSync(dir).isDirectory()) return { dir, joined: true };
    } catch {
      // No word from it.
    }
  }
  return undefined;
}

/**
 * `mkdir -p`, one level at a time. Node's recursive mkdirSync never returns where making a child of
 * an existing directory fails with ENOENT (under /proc): it retries the parent, which exists, forever.
 */
export function makeDirectory(dir: string, mode?: number): void {
  const missing: string[] = [];
  // lstat, not exists: a dangling link is there (mkdir fails on it, as it should), a parent that cannot be read is not climbed past.
  for (let at = path.resolve(dir); fs.lstatSync(at, { throwIfNoEntry: false }) === undefined; at = path.dirname(at)) {
    missing.unshift(at);
    if (path.dirname(at) === at) break;
  }
  for (const each of missing) {
    try {
      fs.mkdirSync(each, { mode });
    } catch (error) {
      if ((error as { code?: string }).code !== "EEXIST") throw error;
    }
  }
  if (!fs.statSync(dir).isDirectory()) {
    throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`), { code: "ENOTDIR", path: dir });
  }
}

/** Marks this thread as started in `dir`; false, after a warning, when it cannot write there (it then writes no record). */
export function startRecord(dir: string): boolean {
  try {
    makeDirectory(dir);
    writeFileAtomically(path.join(dir, `${stem()}.started`), JSON.stringify(writer()));
    if (workerThreads().isMainThread) announceRun(dir);
    return true;
  } catch (error) {
    process.emitWarning(
      `dispatch-hook cannot write its audit record into ${runDirVariable}=${dir} (${error instanceof Error ? error.message : String(error)}); this process is not audited.`,
      { code: "DISPATCH_HOOK_AUDIT_RECORD" },
    );
    return false;
  }
}

/** Leaves word of the run for this process's children and workers (best effort), taken back at exit. */
function announceRun(dir: string): void {
  const notes = notesDirectory();
  const file = path.join(notes, String(process.pid));
  try {
    makeDirectory(notes, 0o700);
    // Notes of processes that ended without their exit handlers (a test runner's workers) go first.
    for (const name of fs.readdirSync(notes)) {
      if (!/^\d+$/.test(name) || alive(Number(name))) continue;
      try {
        fs.unlinkSync(path.join(notes, name));
      } catch {
        // Another process swept it.
      }
    }
    writeFileAtomically(file, dir);
    process.once("exit", () => {
      try {
        fs.unlinkSync(file);
      } catch {
        // Gone already.
      }
    });
  } catch {
    // A child that keeps its environment needs none of this.
  }
}

/** Whether a process has not ended (EPERM: it runs, as another user; on Linux a zombie no one reaped has ended). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = process.platform === "linux" ? fs.readFileSync(`/proc/${pid}/stat`, "utf8") : "";
    return stat[stat.lastIndexOf(")") + 2] !== "Z";
  } catch (error) {
    return (error as { code?: string }).code === "EPERM";
  }
}

/** Whether this realm changed since its last record, whichever copy writes it: then its `<id>.changed` marker is in the run directory (worker-record.ts). */
const changed = () => hub().shared("record-changed@1", () => ({ since: false }));
export function markChanged(dir: string): void {
  const state = changed();
  if (state.since) return;
  fs.writeFileSync(path.join(dir, `${stem()}.changed`), "");
  state.since = true;
}

/** Writes (or rewrites) this thread's record, synchronously: it runs at exit, or after a test file (named as its `entry`). */
export function writeRecord(dir: string, report: AuditReport, exitCode: number | null, entry?: string): void {
  const record: ProcessRecord = {
    format: recordFormat,
    version: 1,
    ...writer(),
    // Named by the test files it ran: the runner's own arguments (`-i --silent`) are not theirs.
    ...(entry === undefined ? {} : { entry, argv: [] }),
    exitCode,
    report,
  };
  writeFileAtomically(path.join(dir, `${stem()}.json`), JSON.stringify(record));
  const state = changed();
  if (state.since) fs.rmSync(path.join(dir, `${stem()}.changed`), { force: true }); // gone already: a reporter emptied the directory
  state.since = false;
}

/**
 * Writes `file` (a record, the Jest adapter's facades) under a temporary name, then renames it into
 * place: a concurrent reader sees the old file or the new one, never half. Leaves no temporary file.
 */
export function writeFileAtomically(file: string, data: string | Uint8Array): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temporary, data);
    fs.renameSync(temporary, file);
  } catch (error) {
    // unlinkSync, not rmSync: rmSync loads Node's rimraf module, a start-up cost for the loader.
    try {
      fs.unlinkSync(temporary);
    } catch {
      // Never written.
    }
    throw error;
  }
}

/** What reading a file of the run directory gives: its value, or why it cannot be one. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; why: string };

type Check = (value: unknown) => boolean;
const str: Check = (v) => typeof v === "string";
const num: Check = (v) => typeof v === "number";
const maybe =
  (check: Check): Check =>
  (v) =>
    v === undefined || check(v);
/** An object whose fields pass their checks (absent fields are undefined). */
const shape =
  (fields: Record<string, Check>): Check =>
  (v) =>
    typeof v === "object" && v !== null && Object.entries(fields).every(([key, check]) => check((v as Record<string, unknown>)[key]));
const list =
  (check: Check): Check =>
  (v) =>
    Array.isArray(v) && v.every(check);
const summary = maybe(shape({ message: str }));

/** What the fold and the report read of a record: a field of another shape (another version's, an edit) makes it unreadable, never a crash. */
const recordShape = shape({
  pid: num,
  thread: num,
  entry: (v) => v === null || str(v),
  argv: list(str),
  node: str,
  exitCode: (v) => v === null || num(v),
  report: shape({
    ok: (v) => typeof v === "boolean",
    checked: num,
    registrations: list(
      shape({
        id: num,
        backend: str,
        op: str,
        state: str,
        site: str,
        registry: maybe(str),
        origin: maybe(shape({ plugin: str, module: str })),
        tables: list(shape({ table: num, module: maybe(str), outcome: str, mechanism: maybe(str) })),
        error: summary,
      }),
    ),
    outside: list(shape({ backend: str, op: str, plugin: str, module: str, table: str })),
    plugins: list(shape({ plugin: str, backend: str, module: str, for: str, state: str, error: summary })),
    backends: maybe(list(shape({ backend: str, tables: num }))),
    problems: list(shape({ kind: str, message: str, backend: maybe(str), op: maybe(str) })),
    notes: list(str),
  }),
});

/** A record read back, checked for what the fold and the report read of it. */
export function asRecord(value: unknown): Parsed<ProcessRecord> {
  const record = value as Partial<ProcessRecord> | null;
  if (typeof record !== "object" || record === null || record.format !== recordFormat) {
    return { ok: false, why: "it is not a dispatch-hook audit record" };
  }
  if (record.version !== 1)
    return { ok: false, why: `it is a record of version ${String(record.version)}, which this version does not read` };
  if (!recordShape(record)) return { ok: false, why: "it is a record with missing fields" };
  // An ok that its own problems contradict (an edit, a foreign writer): neither is believed.
  const { ok, problems } = record.report as AuditReport;
  if (ok && problems.length > 0) return { ok: false, why: `its report says ok beside ${problems.length} problem(s)` };
  return { ok: true, value: record as ProcessRecord };
}
