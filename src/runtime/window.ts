/**
 * Registration windows: each the evaluation of one plugin's registration module right after its
 * backend's dispatch module. Generated code marks a module instance's timeline: step 0 announces
 * the table and opens window 0, finish closes a window once its module has finished, step i opens
 * window i, and step n ends the synchronous pass. A module suspended at a top-level await stays in
 * its window (the hub's async-local storage carries it) while the pass goes on. Writes into the table
 * not made through a registry are found by comparing its entries at each mark: what changed belongs
 * to the window whose module ran in between, or, after the pass, to every window still awaiting.
 */

import { contextFrames } from "../builtins.js";
import { frameworkNamespace, type ModuleInfo, type WindowFact, type WindowInfo } from "../channel.js";
import { writerOf } from "../direct-writes.js";
import { hub } from "../hub.js";
import { exportOf, keyName, listEntries } from "../table-reads.js";

/** Announces a dispatch module's table to the hub. `exports`: an ES module's namespace, or a CommonJS `module.exports`. */
export function signalEvaluated(info: Pick<ModuleInfo, "url" | "backend" | "exportName" | "host">, exports: unknown): void {
  hub().announce({
    via: "hook",
    namespace: frameworkNamespace,
    backend: info.backend,
    module: info.url,
    exports,
    exportName: info.exportName,
    host: info.host,
  });
}

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
  /** The instance's windows, in the order the facade imports their modules. */
  windows?: readonly WindowInfo[];
  /** Opened by early markers, before the table existed; `next` is the instance's timeline once step 0 made it. */
  early?: { next?: Timeline };
}

const timelines = new WeakMap<WindowFact, Timeline>();
/** Each window's table, for every copy of the runtime (a test runner's fresh module registry loads it again). */
let shared: WeakMap<WindowFact, WeakRef<object>> | undefined;
const windowTables = () => (shared ??= hub().shared("window-tables@1", () => new WeakMap<WindowFact, WeakRef<object>>()));

function tableIn(module: ModuleInfo, exports: unknown): object | undefined {
  const table = exportOf(exports, module.exportName);
  return typeof table === "object" && table !== null ? table : undefined;
}

/** @internal */
export function timeline(module: ModuleInfo, exports: unknown): Timeline {
  const table = tableIn(module, exports);
  const entries = listEntries(table);
  const h = hub();
  const outerInfo = h.currentWindow();
  const current = outerInfo === undefined ? undefined : h.window(outerInfo.id);
  // A window that is only presumed failed (its module threw, or Vite evaluates it later) is not one to return to.
  const outer = current?.state === "open" || current?.state === "awaiting" ? current : undefined;
  return {
    table: table === undefined ? undefined : new WeakRef(table),
    last: entries === undefined ? undefined : new Map(entries),
    outer,
    current: undefined,
    awaiting: new Set(),
    syncOver: false,
  };
}

/** A window recorded for this very module instance (the same table): a second route to the same load. */
export function seen(info: WindowInfo, module: ModuleInfo, exports: unknown): boolean {
  const fact = hub().window(info.id);
  if (fact === undefined) return false;
  const line = timelines.get(fact);
  if (line !== undefined) return line.table?.deref() === tableIn(module, exports);
  // Another copy's: by the table it recorded (jest.resetModules() makes a new instance and a new copy).
  const table = windowTables().get(fact);
  return table === undefined || table.deref() === tableIn(module, exports);
}

/**
 * Gives what changed in the table since the last mark, and no registry wrote, to the window that ran:
 * the one in its synchronous part, or after the pass, the one a Dispatcher noted as the writer, else
 * every window awaiting (any of them may have written it).
 */
function mark(line: Timeline): void {
  const table = line.table?.deref();
  const last = line.last;
  const now = listEntries(table);
  if (table === undefined || last === undefined || now === undefined) return;
  const owners = line.syncOver ? [...line.awaiting] : line.current === undefined ? [] : [line.current];
  for (const [type, impl] of now) {
    const had = last.has(type);
    const op = keyName(type);
    if ((had && last.get(type) === impl) || op === undefined || owners.length === 0) continue;
    const opType = type as Function | string;
    if (hub().wrote(table, opType, impl, owners[0]?.info.backend ?? "")) continue;
    const writer = writerOf(table, type);
    const by = owners.find((o) => o.info.id === writer);
    for (const owner of by === undefined ? owners : [by]) owner.outside = [...owner.outside, { op, opType, replaced: had }];
  }
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

/**
 * The first statement of a registration module the loader served (instrument.ts): what its body does
 * is its window's, the first one open or awaiting for it, whatever context its imports left.
 */
export function enter(url: string): void {
  const h = hub();
  const fact = h.windows().find((w) => w.info.module === url && running(w));
  // None: imported by another registration module of the instance, before its own window opened, which opens now.
  const current = fact === undefined ? h.currentWindow() : undefined;
  const line = current === undefined ? undefined : timelines.get(h.window(current.id) as WindowFact);
  const info = line?.windows?.find((w) => w.module === url);
  if (fact !== undefined) h.enterWindow(fact);
  else if (line !== undefined && info !== undefined && h.window(info.id) === undefined) record(line, info);
}

/** Records window `info`: opened, or, for a registration module that could not be loaded, missing. */
export function record(line: Timeline, info: WindowInfo, missing?: string, hosted = false): WindowFact {
  const error = missing === undefined ? undefined : { name: "Error", message: missing, code: "ERR_DISPATCH_REGISTRATION_MODULE" };
  const fact: WindowFact = { info, state: missing === undefined ? "open" : "missing", outside: [], error };
  open(fact, line, missing === undefined, hosted);
  if (missing === undefined) line.current = fact;
  return fact;
}

/**
 * Opens window `index` of a module instance, or at `windows.length` ends the synchronous pass; the
 * first call announces the table. `missing` names a registration module not found: recorded, never opened.
 */
export function step(module: ModuleInfo, exports: unknown, windows: readonly WindowInfo[], index: number, missing?: string): void {
  const h = hub();
  const previous = windows[Math.max(0, index - 1)];
  const before = previous === undefined ? undefined : h.window(previous.id);
  let line = before === undefined ? undefined : timelines.get(before);
  if (line?.early !== undefined) line = index === 0 ? undefined : line.early.next;
  if (index === 0) {
    signalEvaluated(module, exports);
    // A registration module that throws synchronously stops the whole pass: the steps after it
    // never run. Once the current job is over, a window still in its synchronous part did not finish.
    queueMicrotask(() => abandon(windows));
    // A pass that a registration module's throw cut short never reached its last early marker.
    earlyLines.delete(module.url);
    line = timeline(module, exports);
    for (const w of windows) {
      const fact = h.window(w.id);
      const opened = fact === undefined ? undefined : timelines.get(fact)?.early;
      if (opened !== undefined) opened.next = line;
    }
  }
  line ??= timeline(module, exports);
  line.windows ??= windows;
  if (line.current !== undefined) suspend(line);
  const info = windows[index];
  if (info === undefined) line.syncOver = true;
  // Past the last window, or a second route to the same load (the module ran already).
  // Context frames do not carry a store set while Vite's module runner evaluates one module to the
  // next module it evaluates (an await apart; Node 20's async hooks do): there the hub also keeps the
  // window Vite's generated code entered, for code with no async context of its own, until the next
  // step or until it settles.
  const hosted = module.host?.name === "dispatch-hook/vite" && contextFrames();
  // A window an early marker opened: one whose module has not run, or awaits, goes on as this step's.
  const opened = info === undefined ? undefined : h.window(info.id);
  const openedEarly = opened !== undefined && timelines.get(opened)?.early !== undefined;
  if (openedEarly && running(opened)) adopt(line, opened, hosted);
  else if (info === undefined || openedEarly || seen(info, module, exports)) h.enterWindow(line.outer, hosted);
  else {
    record(line, info, missing, hosted);
    if (missing !== undefined) h.enterWindow(line.outer, hosted);
  }
}

/** Step i takes over window i, which an early marker opened before the table existed. */
function adopt(line: Timeline, fact: WindowFact, hosted: boolean): void {
  timelines.get(fact)?.awaiting.delete(fact);
  fact.state = "open";
  line.current = fact;
  open(fact, line, true, hosted);
}

function open(fact: WindowFact, line: Timeline, enter: boolean, hosted: boolean): void {
  timelines.set(fact, line);
  if (line.table !== undefined) windowTables().set(fact, line.table);
  hub().openWindow(fact, line.table?.deref(), enter, hosted);
}

/** Early i's timelines, by module instance, until early n ends the pass. */
const earlyLines = new Map<string, Timeline>();

/**
 * Early marker i (facade.ts): in the same pass as step i, importing nothing of the dispatch module.
 * After step i it does nothing. Before it (the dispatch module awaits at its top level, so the steps
 * wait for it, while ES modules run a registration module that does not import it at once), it opens
 * window i with no table yet, so that what the registration module registers is the plugin's and a
 * conflict is contained; at `windows.length` it ends that pass.
 */
export function early(module: ModuleInfo, windows: readonly WindowInfo[], index: number): void {
  const h = hub();
  const info = windows[index];
  let line = earlyLines.get(module.url);
  if (info === undefined) {
    if (line === undefined) return;
    earlyLines.delete(module.url);
    if (line.current !== undefined) suspend(line);
    line.syncOver = true;
    h.enterWindow(line.outer);
    return;
  }
  if (h.window(info.id) !== undefined) return;
  if (line === undefined) {
    line = { ...timeline(module, undefined), early: {}, windows };
    earlyLines.set(module.url, line);
  }
  if (line.current !== undefined) suspend(line);
  record(line, info);
}

/**
 * Marked failed, not settled: a host that evaluates modules asynchronously (Vite's module runner
 * awaits every import) reaches the next step later, and the window then carries on.
 */
function abandon(windows: readonly WindowInfo[]): void {
  const h = hub();
  for (const info of windows) {
    const fact = h.window(info.id);
    if (fact?.state === "open") fact.state = "failed";
  }
}

/** Once the registration modules of these windows have finished (top-level awaits included). */
export function finish(windows: readonly WindowInfo[]): void {
  const h = hub();
  for (const info of windows) {
    const fact = h.window(info.id);
    if (fact === undefined) {
      // The dispatch module awaits at its top level: a registration module that does not import it
      // waits on nothing, so ES modules ran it, outside any window, before step i could open one.
      // Recorded as run, so that step i finds it: what it registered lands, recorded as the app's.
      h.openWindow({ info, state: "done", outside: [], error: undefined }, undefined, false);
      continue;
    }
    const line = timelines.get(fact);
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
  record(timeline(module, exports), info, message);
}
