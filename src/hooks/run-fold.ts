/**
 * One audit over every process of a run: the records in a run directory (run-records.ts), folded, for
 * the command line and the Vitest and Jest reporters alike. A record that is missing, truncated,
 * corrupt or foreign is named, never skipped, and never ok.
 */
import { fs, os, path } from "../builtins.js";
import type { AuditReport } from "../registry/audit-events.js";
import { formatReport, formatTable, okVerdict, shortPath, undoneText, waitingText } from "../registry/audit-format.js";
import { alive, asRecord, type Parsed, type RecordWriter, runDirVariable } from "../registry/run-records.js";

const runFormat = "dispatch-hook/audit";

/** One thread of the run: its record, or why it has none. */
export interface RunProcess extends RecordWriter {
  /** The exit code its record gives; `null` when it wrote before its end, or wrote no record. */
  readonly exitCode: number | null;
  /** No problems in its record. False when it has no record. */
  readonly ok: boolean;
  readonly checked: number;
  /** Set when it started auditing and wrote no record, or no record of its last change: why, as far as is known. */
  readonly missing?: string;
  /** Set by a reporter's fold under `dispatch-hook audit` for a process still running: the command's fold judges it. */
  readonly running?: true;
  readonly report?: AuditReport;
}

/** The run's audit: the JSON document of `dispatch-hook audit --json` and `doctor --json`. */
export interface RunAudit {
  readonly format: typeof runFormat;
  readonly version: 1;
  /** Every record read and ok, none missing, nothing unreadable, and something checked (a process still running is not judged). */
  readonly ok: boolean;
  /** How many things were checked, over every process. */
  readonly checked: number;
  readonly processes: readonly RunProcess[];
  /** Files in the run directory that are not records this version reads, and why. */
  readonly unreadable: ReadonlyArray<{ readonly file: string; readonly why: string }>;
}

/** What the caller knows of a process it started itself (the command line's child). */
export interface KnownExit {
  readonly pid: number;
  /** "exited with code 7", "was killed by SIGTERM (exit code 143)". */
  readonly text: string;
}

function parse(file: string): Parsed<unknown> {
  let failing = "it cannot be read";
  try {
    const text = fs.readFileSync(file, "utf8");
    failing = "it is truncated or corrupt";
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, why: `${failing} (${error instanceof Error ? error.message : String(error)})` };
  }
}

const staleText =
  "changed after its last record, then ended without its exit handlers (a worker's terminate(), say): what it did last is not known";

/** One thread of one process, whichever of its realms wrote. */
const threadOf = (p: { readonly pid: number; readonly thread: number }): string => `${p.pid}-${p.thread}`;

/**
 * Reads and folds every record in `dir`. Never throws for what the directory holds. `alive`, when
 * given, says which processes have not ended: a start without a record is theirs to finish.
 * `unrecorded`, when given, says why a process that ended wrote no record, when the caller knows
 * (a test runner's reporter that sees the runner was never set up to write them).
 */
export function foldRun(
  dir: string,
  known?: KnownExit,
  alive?: (pid: number) => boolean,
  unrecorded?: (writer: RecordWriter) => string | undefined,
): RunAudit {
  const names = fs.readdirSync(dir).sort();
  const present = new Set(names);
  const processes: RunProcess[] = [];
  const unreadable: Array<{ file: string; why: string }> = [];
  const recorded = new Set<string>();
  for (const name of names.filter((n) => n.endsWith(".json"))) {
    const parsed = parse(path.join(dir, name));
    const record = parsed.ok ? asRecord(parsed.value) : parsed;
    if (!record.ok) {
      unreadable.push({ file: name, why: record.why });
      continue;
    }
    const stem = name.slice(0, -".json".length);
    recorded.add(stem);
    const { format: _format, version: _version, report, ...writer } = record.value;
    // A worker marks a change at once and records it after: the marker left means it ended in between (terminate()).
    const stale = present.has(`${stem}.changed`) && !alive?.(writer.pid);
    processes.push({ ...writer, ok: report.ok && !stale, checked: report.checked, report, ...(stale ? { missing: staleText } : {}) });
  }
  const written = new Set(processes.map(threadOf));
  for (const name of names) {
    // A child's pid (spawned.ts) is for the command to wait on: the child's own files say the rest.
    if (name.endsWith(".json") || /^\d+\.spawned$/.test(name)) continue;
    if (name.endsWith(".changed") && present.has(`${name.slice(0, -".changed".length)}.started`)) continue;
    // A record being rewritten (a test runner's worker, at its exit) while this reads.
    if (name.endsWith(".tmp") && recorded.has(name.slice(0, name.indexOf(".json.")))) continue;
    if (!name.endsWith(".started")) {
      unreadable.push({
        file: name,
        why: name.endsWith(".tmp")
          ? "it is a record left half written (its process was killed while writing)"
          : "it is not a dispatch-hook file",
      });
      continue;
    }
    const stem = name.slice(0, -".started".length);
    if (recorded.has(stem)) continue;
    const parsed = parse(path.join(dir, name));
    const start = (parsed.ok ? parsed.value : {}) as Partial<RecordWriter>;
    const pid = typeof start.pid === "number" ? start.pid : Number(stem.split("-")[0]);
    const thread = typeof start.thread === "number" ? start.thread : Number(stem.split("-")[1]);
    const writer = {
      pid,
      ppid: typeof start.ppid === "number" ? start.ppid : 0,
      thread,
      // A start file of another shape says only that the process started.
      entry: typeof start.entry === "string" ? start.entry : null,
      argv: Array.isArray(start.argv) && start.argv.every((a) => typeof a === "string") ? start.argv : [],
      node: typeof start.node === "string" ? start.node : "?",
      exitCode: null,
      ok: false,
      checked: 0,
    };
    // Another realm of the same thread wrote its record: the test files a vm pool runs in vm contexts
    // of their own (Vitest's vmThreads and vmForks), while the worker's own realm only ran the test
    // runner and is stopped without its exit handlers.
    if (written.has(threadOf({ pid, thread }))) continue;
    if (alive?.(pid)) {
      processes.push({ ...writer, running: true });
      continue;
    }
    const exit =
      known !== undefined && known.pid === pid && thread === 0
        ? `it ${known.text}`
        : (unrecorded?.(writer) ?? "it was killed, or ended before its exit handlers ran");
    processes.push({ ...writer, missing: `started, and wrote no audit record: ${exit}` });
  }
  processes.sort((a, b) => a.pid - b.pid || a.thread - b.thread);
  const checked = processes.reduce((n, p) => n + p.checked, 0);
  const ok = checked > 0 && unreadable.length === 0 && processes.every((p) => p.ok || p.running);
  return { format: runFormat, version: 1, ok, checked, processes, unreadable };
}

/** A process as people name it: its program, relative to `cwd`, and its arguments. */
function programOf(p: RecordWriter, cwd: string = process.cwd()): string {
  if (p.entry === null && p.thread !== 0) return `worker thread ${p.thread} of pid ${p.pid}`;
  const entry = p.entry
    ?.split(", ")
    .map((file) => shortPath(file, cwd))
    .join(", ");
  const words = p.thread !== 0 ? (entry as string) : [entry ?? "node", ...p.argv].join(" ");
  return words.length > 80 ? `${words.slice(0, 79)}…` : words;
}

function summary(p: RunProcess): string {
  if (p.missing !== undefined) return "no record";
  if (p.running) return "running";
  if (p.report === undefined) return "?";
  if (!p.ok) return `${p.report.problems.length} problem(s)`;
  if (p.checked === 0) return "nothing checked";
  const landed = p.report.registrations.filter((r) => r.state === "applied").length + p.report.outside.length;
  return `ok, ${landed} landed`;
}

/**
 * How many processes (threads) the records come from: a test runner that runs each test file in a
 * realm of its own (Jest's module registries, Vitest's vm pools) writes one record per file.
 */
function threads(records: readonly RunProcess[]): number {
  return new Set(records.map(threadOf)).size;
}

/**
 * "2 process(es)", with their threads where a process ran more than one (worker threads, a test
 * runner's thread pool); "1 of 2 process(es)" when `of` holds more.
 */
function processes(records: readonly RunProcess[], of: readonly RunProcess[] = records): string {
  const pids = (r: readonly RunProcess[]) => new Set(r.map((p) => p.pid)).size;
  const part = (n: number, all: number) => (n === all ? `${n}` : `${n} of ${all}`);
  const allThreads = threads(of);
  const threadsText = allThreads > pids(of) ? ` (${part(threads(records), allThreads)} threads)` : "";
  return `${part(pids(records), pids(of))} process(es)${threadsText}`;
}

/** ", 2 audit records (…)" when the records of these entries are more than their processes, else "". */
function realms(entries: readonly RunProcess[]): string {
  const recorded = entries.filter((p) => p.report !== undefined);
  return recorded.length > threads(recorded) ? `, ${recorded.length} audit records (one per test file or realm)` : "";
}

/** Why the run is not ok, or what it checked: the last line. */
function runVerdict(run: RunAudit): string {
  const failing = run.processes.filter((p) => p.report !== undefined && !p.ok);
  const missing = run.processes.filter((p) => p.missing !== undefined);
  const problems = run.processes.reduce((n, p) => n + (p.report?.problems.length ?? 0), 0);
  const parts = [
    ...(problems > 0 ? [`${problems} problem(s) in ${processes(failing)}`] : []),
    ...(missing.length > 0 ? [`${processes(missing)} without a record`] : []),
    ...(run.unreadable.length > 0 ? [`${run.unreadable.length} unreadable file(s) in the run directory`] : []),
  ];
  if (parts.length > 0) return `not ok: ${parts.join(", ")}`;
  if (run.processes.length === 0)
    return "nothing was checked: no process wrote an audit record (did the command start Node with the loader?)";
  const registrations = run.processes.flatMap((p) => p.report?.registrations ?? []);
  if (run.checked === 0) {
    const wait = waitingText(registrations);
    const why = undoneText(registrations) ?? "no process made a registration or declared a backend that loaded";
    return `nothing was checked: ${wait === undefined ? why : `no registration landed; ${wait}`}`;
  }
  const checking = run.processes.filter((p) => p.checked > 0);
  return okVerdict(registrations, `, in ${processes(checking, run.processes)}${realms(checking)}`);
}

/**
 * The run for people: one row per process, the full audit of each process with a problem (or of the
 * only one that registered anything), what could not be read, and the verdict last.
 */
export function formatRun(run: RunAudit, cwd: string = process.cwd()): string {
  const out: string[] = [];
  const only = run.processes.length === 1 ? run.processes[0] : undefined;
  const failing = run.processes.filter((p) => p.report !== undefined && !p.ok);
  const registering = run.processes.filter((p) => (p.report?.registrations.length ?? 0) + (p.report?.outside.length ?? 0) > 0);
  const shown = only?.report !== undefined ? [only] : failing.length > 0 ? failing : registering.length === 1 ? registering : [];
  if (only?.report === undefined) {
    const rows = run.processes.map((p) => {
      const exit = p.exitCode === null ? "-" : String(p.exitCode);
      return [String(p.pid), p.thread === 0 ? "main" : String(p.thread), p.node, exit, summary(p), programOf(p, cwd)];
    });
    out.push(
      `${processes(run.processes)}${realms(run.processes)} wrote to the run:`,
      ...formatTable(["pid", "thread", "node", "exit", "audit", "program"], rows),
    );
  }
  for (const p of shown) {
    if (out.length > 0) out.push("");
    out.push(`pid ${p.pid} (${programOf(p, cwd)}):`);
    out.push(formatReport(p.report as AuditReport));
  }
  const notes = [
    ...run.processes.filter((q) => q.missing !== undefined).map((p) => `  [no record] pid ${p.pid} (${programOf(p, cwd)}) ${p.missing}`),
    ...run.processes
      .filter((q) => q.running)
      .map(
        (p) =>
          `  [running] pid ${p.pid} (${programOf(p, cwd)}) has not ended: its record comes at its exit, for the fold of the command that started the run`,
      ),
    ...run.unreadable.map((u) => `  [unreadable] ${u.file} in the run directory: ${u.why}`),
  ];
  // Apart from the last process's own problems, which they are not.
  if (notes.length > 0 && shown.length > 0) out.push("", "the run:");
  out.push(...notes, runVerdict(run));
  return out.join("\n");
}

/**
 * The run directory a test-runner reporter folds: the command line's, or one it makes for the workers
 * it starts next (emptied at each run, removed at exit). In the command line's, the processes that
 * started the reporter write their records after it folded: it leaves them to the command's fold.
 */
export class RunDirectory {
  readonly path: string;
  /** Whether it was made here (and so is emptied and removed here). */
  readonly #own: boolean;

  constructor() {
    const given = process.env[runDirVariable];
    this.#own = !given;
    this.path = given || fs.mkdtempSync(path.join(os().tmpdir(), "dispatch-hook-run-"));
    if (!this.#own) return;
    // Workers start after the reporter, and inherit this.
    process.env[runDirVariable] = this.path;
    const dir = this.path;
    process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  }

  /** At the start of a run: in watch mode, each run starts empty. */
  clear(): void {
    if (this.#own) for (const name of fs.readdirSync(this.path)) fs.unlinkSync(path.join(this.path, name));
  }

  /**
   * The run's audit, its report, its verdict line, and whether the run fails: as `dispatch-hook
   * audit` would (a miss, a worker without a record, an unreadable file, or nothing checked), but
   * for the processes still running, which the command's fold judges. `unrecorded`: see foldRun.
   */
  fold(
    root?: string,
    unrecorded?: (writer: RecordWriter) => string | undefined,
  ): { audit: RunAudit; text: string; verdict: string; failed: boolean } {
    const audit = foldRun(this.path, undefined, this.#own ? undefined : alive, unrecorded);
    const verdict = runVerdict(audit);
    return { audit, text: `\ndispatch-hook audit\n${formatRun(audit, root)}`, verdict, failed: !audit.ok };
  }
}
