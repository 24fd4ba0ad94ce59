/**
 * A run's records: each thread that audits writes its own into the run directory (DISPATCH_HOOK_AUDIT_DIR),
 * `<id>.started` when it starts and `<id>.json` when it (or its test file) ends, so that a thread that
 * never wrote its record is seen as such. The command line and the reporters fold them (run-fold.ts).
 */
import { crypto, fs, path, workerThreads } from "../builtins.js";
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

/** Marks this thread as started in `dir`; false, after a warning, when it cannot write there (it then writes no record). */
export function startRecord(dir: string): boolean {
  try {
    fs.mkdirSync(dir, { recursive: true });
    writeFileAtomically(path.join(dir, `${stem()}.started`), JSON.stringify(writer()));
    return true;
  } catch (error) {
    process.emitWarning(
      `dispatch-hook cannot write its audit record into ${runDirVariable}=${dir} (${error instanceof Error ? error.message : String(error)}); this process is not audited.`,
      { code: "DISPATCH_HOOK_AUDIT_RECORD" },
    );
    return false;
  }
}

/** Writes (or rewrites) this thread's record, synchronously: it runs at exit, or after a test file (named as its `entry`). */
export function writeRecord(dir: string, report: AuditReport, exitCode: number | null, entry?: string): void {
  const record: ProcessRecord = {
    format: recordFormat,
    version: 1,
    ...writer(),
    ...(entry === undefined ? {} : { entry }),
    exitCode,
    report,
  };
  writeFileAtomically(path.join(dir, `${stem()}.json`), JSON.stringify(record));
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
