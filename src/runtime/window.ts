/**
 * Registration windows: the evaluation of one plugin's registration module, right after its
 * backend's dispatch module. Generated code marks the timeline of one module instance:
 *
 *   open 0   the table is announced; window 0 opens          ─ registration module 0 runs
 *   close 0  (imports module 0) it has finished: window 0 is done
 *   open 1   window 1 opens                                   ─ registration module 1 runs
 *   close 1  …
 *   end      the synchronous pass is over: no window is current for what the app runs next
 *
 * Without top-level await, each close runs right after its module. A module that awaits is
 * suspended: the pass goes on (open i+1 ends its synchronous part), and its close runs once it has
 * finished. Meanwhile the window stays current for that module's code (the hub's async-local
 * storage carries it past the await), so what it registers is the plugin's, and a conflict it
 * causes is contained. The hub keeps each window's facts while its table lives, so every copy of the
 * package sees every window.
 *
 * Writes made directly into the table, not through a registry, are found by comparing the table's
 * entries at each mark: what changed since the last mark belongs to the window whose module ran in
 * between (during the synchronous pass, exactly one), or, after it, to every window still awaiting.
 */
import {
  type ErrorSummary,
  keyName,
  listEntries,
  type ModuleInfo,
  type OutsideWrite,
  summarizeError,
  type WindowFact,
  type WindowInfo,
} from "../channel.js";
import { hub } from "../hub.js";
import { signalEvaluated } from "./evaluated.js";

/** One module instance's timeline. Kept by the copy whose generated code marks it. */
interface Timeline {
  /** Weak: the hub keeps a window while its table lives, and the window must not keep the table. */
  readonly table: WeakRef<object> | undefined;
  /** The table's entries at the last mark, while a window of the instance may still write. */
  last: Map<unknown, unknown> | undefined;
  /** The window current when the instance's first step ran (a registration module importing this one). */
  readonly outer: WindowFact | undefined;
  /** The window whose module is running its synchronous part. */
  current: WindowFact | undefined;
  /** Windows whose module is suspended at a top-level await. */
  readonly awaiting: Set<WindowFact>;
  syncOver: boolean;
}

const timelines = new WeakMap<WindowFact, Timeline>();

function tableIn(module: ModuleInfo, exports: unknown): object | undefined {
  const table = typeof exports === "object" && exports !== null ? (exports as Record<string, unknown>)[module.exportName] : undefined;
  return typeof table === "object" && table !== null ? table : undefined;
}

function snapshot(table: unknown): Map<unknown, unknown> | undefined {
  const entries = listEntries(table);
  return entries === undefined ? undefined : new Map(entries);
}

function timeline(module: ModuleInfo, exports: unknown): Timeline {
  const table = tableIn(module, exports);
  const h = hub();
  const outerInfo = h.currentWindow();
  const current = outerInfo === undefined ? undefined : h.window(outerInfo.id);
  // A window that is only presumed failed (its module threw, or Vite evaluates it later) is not one to return to.
  const outer = current?.state === "open" || current?.state === "awaiting" ? current : undefined;
  return {
    table: table === undefined ? undefined : new WeakRef(table),
    last: snapshot(table),
    outer,
    current: undefined,
    awaiting: new Set(),
    syncOver: false,
  };
}

/** A window recorded for this very module instance (the same table): a second route to the same load. */
function seen(info: WindowInfo, module: ModuleInfo, exports: unknown): boolean {
  const fact = hub().window(info.id);
  const line = fact === undefined ? undefined : timelines.get(fact);
  return fact !== undefined && (line === undefined || line.table?.deref() === tableIn(module, exports));
}

/** Gives what changed in the table since the last mark, and no registry wrote, to the windows that ran. */
function mark(line: Timeline): void {
  const table = line.table?.deref();
  const last = line.last;
  const now = listEntries(table);
  if (table === undefined || last === undefined || now === undefined) return;
  const owners = line.syncOver ? [...line.awaiting] : line.current === undefined ? [] : [line.current];
  const found: OutsideWrite[] = [];
  for (const [type, impl] of now) {
    const had = last.has(type);
    const op = keyName(type);
    if ((had && last.get(type) === impl) || op === undefined || owners.length === 0) continue;
    const opType = type as Function | string;
    if (!hub().wrote(table, opType, impl, owners[0]?.info.backend ?? "")) found.push({ op, opType, replaced: had });
  }
  if (found.length > 0) for (const owner of owners) owner.outside = [...owner.outside, ...found];
  line.last = new Map(now);
}

/** A window whose module may still be running: open, awaiting, or only presumed failed (abandon()). */
function running(fact: WindowFact | undefined): fact is WindowFact {
  return (
    fact !== undefined && (fact.state === "open" || fact.state === "awaiting" || (fact.state === "failed" && fact.error === undefined))
  );
}

/** The current window's synchronous part is over: it has finished, or it awaits. */
function suspend(line: Timeline): void {
  mark(line);
  const fact = line.current;
  line.current = undefined;
  if (running(fact)) {
    fact.state = "awaiting";
    line.awaiting.add(fact);
  }
}

function record(line: Timeline, info: WindowInfo, state: "open" | "missing", error?: ErrorSummary): WindowFact {
  const fact: WindowFact = { info, state, outside: [], error };
  timelines.set(fact, line);
  hub().openWindow(fact, line.table?.deref(), state === "open");
  if (state === "open") line.current = fact;
  return fact;
}

/**
 * Generated code: opens window `index` of a module instance (`windows`), or, at index
 * `windows.length`, ends the synchronous pass. The first call announces the table. `missing` names
 * a registration module that could not be found: its window is recorded, never opened.
 */
export function step(module: ModuleInfo, exports: unknown, windows: readonly WindowInfo[], index: number, missing?: string): void {
  const h = hub();
  const previous = windows[Math.max(0, index - 1)];
  const before = previous === undefined ? undefined : h.window(previous.id);
  let line = before === undefined ? undefined : timelines.get(before);
  if (index === 0) {
    signalEvaluated(module, exports);
    // A registration module that throws synchronously stops the whole pass: the steps after it
    // never run. Once the current job is over, a window still in its synchronous part did not finish.
    queueMicrotask(() => abandon(windows));
    line = timeline(module, exports);
  }
  line ??= timeline(module, exports);
  if (line.current !== undefined) suspend(line);
  const info = windows[index];
  if (info === undefined) {
    line.syncOver = true;
    h.enterWindow(line.outer);
    return;
  }
  if (seen(info, module, exports)) {
    // A second route to the same load: the module ran already.
    h.enterWindow(line.outer);
    return;
  }
  if (missing === undefined) record(line, info, "open");
  else {
    record(line, info, "missing", { name: "Error", message: missing, code: "ERR_DISPATCH_REGISTRATION_MODULE" });
    h.enterWindow(line.outer);
  }
}

/**
 * Once the job that ran the first step is over, a window still in its synchronous part did not
 * finish: its module threw and stopped the pass. It is marked failed, but not settled: a host that
 * evaluates modules asynchronously (Vite's module runner awaits every import) reaches the next step
 * later, and the window then carries on.
 */
function abandon(windows: readonly WindowInfo[]): void {
  const h = hub();
  for (const info of windows) {
    const fact = h.window(info.id);
    if (fact?.state === "open") fact.state = "failed";
  }
}

/** Generated code, once the registration modules of these windows have finished (top-level awaits included). */
export function finish(windows: readonly WindowInfo[]): void {
  const h = hub();
  for (const info of windows) {
    const fact = h.window(info.id);
    const line = fact === undefined ? undefined : timelines.get(fact);
    if (!running(fact) || line === undefined) continue;
    if (line.current === fact) suspend(line);
    else mark(line);
    line.awaiting.delete(fact);
    fact.state = "done";
    h.settleWindow(fact);
    // Nothing of this instance can write any more: drop the copy of its entries.
    if (line.syncOver && line.current === undefined && line.awaiting.size === 0) line.last = undefined;
  }
}

/** Records a registration module that could not be loaded (it does not exist, say). */
export function missingRegistration(info: WindowInfo, module: ModuleInfo, exports: unknown, message: string): void {
  if (seen(info, module, exports)) return;
  record(timeline(module, exports), info, "missing", { name: "Error", message, code: "ERR_DISPATCH_REGISTRATION_MODULE" });
}

/** Runs a registration module through `load` (require()), inside its window; a throw is recorded, not rethrown. */
export function runRegistration(info: WindowInfo, module: ModuleInfo, exports: unknown, load: () => unknown): void {
  const h = hub();
  if (seen(info, module, exports)) return;
  const line = timeline(module, exports);
  const fact = record(line, info, "open");
  try {
    load();
    finish([info]);
    line.last = undefined;
  } catch (error) {
    fact.state = "failed";
    fact.error = summarizeError(error);
    h.settleWindow(fact);
  } finally {
    h.enterWindow(line.outer);
  }
}
