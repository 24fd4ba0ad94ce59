/**
 * Registration windows: the evaluation of one plugin's registration module, right after its
 * backend's dispatch module. Generated code marks the timeline of one module instance:
 *
 *   step 0: the table is announced, window 0 opens       ─ registration module 0 runs
 *   step i: window i-1's synchronous part ends, window i opens ─ registration module i runs
 *   step n: the last window's synchronous part ends
 *   facade body (every registration module has finished, top-level awaits included): all are done
 *
 * A window is current for the code of its registration module, including what runs after a
 * top-level await (the hub's async-local storage carries it), so a registration made there is the
 * plugin's and a conflict it causes is contained. The hub keeps each window's facts while its
 * table lives, so every copy of the package sees every window.
 *
 * Writes made directly into the table, not through a registry, are found by comparing the table's
 * entries: those of a window's synchronous part exactly; those made after the synchronous pass (by
 * modules that awaited) are given to every window of the instance that was still awaiting.
 */
import {
  type ErrorSummary,
  type ModuleInfo,
  type OutsideWrite,
  summarizeError,
  type WindowFact,
  type WindowInfo,
} from "../channel.js";
import { hub } from "../hub.js";
import { keyName, listEntries } from "../table-entries.js";
import { signalEvaluated } from "./evaluated.js";

interface Segment {
  readonly table: object | undefined;
  /** The table's entries when the window opened, or when the synchronous pass ended. */
  before: Map<unknown, unknown> | undefined;
}

/** Per window fact: what the diff starts from. Kept by the copy whose generated code opened it. */
const segments = new WeakMap<WindowFact, Segment>();

function tableIn(module: ModuleInfo, exports: unknown): unknown {
  return typeof exports === "object" && exports !== null ? (exports as Record<string, unknown>)[module.exportName] : undefined;
}

function snapshot(table: unknown): Map<unknown, unknown> | undefined {
  const entries = listEntries(table);
  return entries === undefined ? undefined : new Map(entries);
}

function open(info: WindowInfo, module: ModuleInfo, exports: unknown, state: "open" | "missing", error?: ErrorSummary): WindowFact {
  const table = tableIn(module, exports);
  const object = typeof table === "object" && table !== null ? table : undefined;
  const fact: WindowFact = { info, state, outside: [], error };
  segments.set(fact, { table: object, before: state === "open" ? snapshot(object) : undefined });
  hub().openWindow(fact, object, state === "open");
  return fact;
}

/** The entries changed since `segment.before` that no registry wrote. */
function outsideWrites(fact: WindowFact, segment: Segment): OutsideWrite[] {
  const { table, before } = segment;
  const after = listEntries(table);
  if (table === undefined || before === undefined || after === undefined) return [];
  const found: OutsideWrite[] = [];
  for (const [type, impl] of after) {
    const had = before.has(type);
    const op = keyName(type);
    if ((had && before.get(type) === impl) || op === undefined) continue;
    const opType = type as Function | string;
    if (!hub().wrote(table, opType, impl, fact.info.backend)) found.push({ op, opType, replaced: had });
  }
  return found;
}

/** The synchronous part of a window has ended: what it wrote is its own. It may still await. */
function endSegment(id: string | undefined): void {
  const fact = id === undefined ? undefined : hub().window(id);
  const segment = fact === undefined ? undefined : segments.get(fact);
  if (fact === undefined || segment === undefined || fact.state !== "open") return;
  fact.outside = outsideWrites(fact, segment);
  fact.state = "awaiting";
  segment.before = snapshot(segment.table);
}

/**
 * Generated code's step `index` of a module instance's `windows`: step 0 announces the table;
 * every step ends the previous window's synchronous part and opens the next window, and the last
 * step (index === windows.length) makes no window current. `missing` names registration modules
 * that could not be found: their window is recorded, never opened.
 */
export function step(module: ModuleInfo, exports: unknown, windows: readonly WindowInfo[], index: number, missing?: string): void {
  const h = hub();
  if (index === 0) {
    signalEvaluated(module, exports);
    // A registration module that throws synchronously stops the whole pass: the steps after it
    // never run. Once the current job is over, a window still in its synchronous part did not finish.
    queueMicrotask(() => abandon(windows));
  }
  endSegment(windows[index - 1]?.id);
  const info = windows[index];
  if (info === undefined) {
    // The synchronous pass is over: what awaiting modules write from now on is measured from here.
    for (const other of windows) {
      const fact = h.window(other.id);
      const segment = fact === undefined ? undefined : segments.get(fact);
      if (fact?.state === "awaiting" && segment !== undefined) segment.before = snapshot(segment.table);
    }
  }
  if (info === undefined || h.window(info.id) !== undefined) {
    h.enterWindow(undefined);
    return;
  }
  if (missing === undefined) open(info, module, exports, "open");
  else {
    open(info, module, exports, "missing", { name: "Error", message: missing, code: "ERR_DISPATCH_REGISTRATION_MODULE" });
    h.enterWindow(undefined);
  }
}

function abandon(windows: readonly WindowInfo[]): void {
  const h = hub();
  for (const info of windows) {
    const fact = h.window(info.id);
    if (fact?.state !== "open") continue;
    fact.state = "failed";
    h.settleWindow(fact);
    for (const other of windows) {
      const earlier = h.window(other.id);
      if (earlier?.state === "awaiting") {
        earlier.state = "done";
        h.settleWindow(earlier);
      }
    }
  }
}

/** Generated code, once every registration module of the instance has finished: each window is done. */
export function finish(windows: readonly WindowInfo[]): void {
  const h = hub();
  for (const info of windows) {
    const fact = h.window(info.id);
    const segment = fact === undefined ? undefined : segments.get(fact);
    if (fact === undefined || (fact.state !== "awaiting" && fact.state !== "open")) continue;
    if (segment !== undefined) {
      const late = outsideWrites(fact, segment);
      if (late.length > 0) fact.outside = [...fact.outside, ...late];
    }
    fact.state = "done";
    h.settleWindow(fact);
  }
}

/** Records a registration module that could not be loaded (it does not exist, say). */
export function missingRegistration(info: WindowInfo, module: ModuleInfo, exports: unknown, message: string): void {
  if (hub().window(info.id) !== undefined) return;
  open(info, module, exports, "missing", { name: "Error", message, code: "ERR_DISPATCH_REGISTRATION_MODULE" });
}

/** Runs a registration module through `load` (require()), inside its window; a throw is recorded, not rethrown. */
export function runRegistration(info: WindowInfo, module: ModuleInfo, exports: unknown, load: () => unknown): void {
  const h = hub();
  if (h.window(info.id) !== undefined) return;
  const fact = open(info, module, exports, "open");
  try {
    load();
    endSegment(info.id);
    finish([info]);
  } catch (error) {
    fact.state = "failed";
    fact.error = summarizeError(error);
    h.settleWindow(fact);
  } finally {
    h.enterWindow(undefined);
  }
}
