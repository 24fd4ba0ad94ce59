/**
 * Registration windows: the evaluation of one plugin's registration module, right after its
 * backend's dispatch module. Generated code opens and closes them; registries ask which window is
 * open (a registration made inside one is the plugin's declarative registration), and the audit asks
 * what each window saw. A window keeps its facts itself and answers queries while its table lives:
 * there is no module-level list, so every copy of the package sees every window.
 */
import {
  ask,
  channels,
  type ErrorSummary,
  type ModuleInfo,
  type OutsideWrite,
  sameRealm,
  summarizeError,
  type TableWrittenMessage,
  type WindowCurrentMessage,
  type WindowFact,
  type WindowInfo,
  type WindowQueryMessage,
  type WindowState,
} from "../channel.js";
import { keyName, listEntries } from "../table-entries.js";

/** What generated code holds: the end marker closes the window its begin marker opened. */
export interface Window {
  close(): void;
}

const done: Window = Object.freeze({ close() {} });

function existing(id: string): WindowFact | undefined {
  return ask<WindowQueryMessage>(channels.windowQuery, { version: 1, windows: [] }).windows.find((w) => w.info.id === id);
}

class OpenWindow implements Window {
  state: WindowState = "open";
  error: ErrorSummary | undefined;
  outside: readonly OutsideWrite[] = [];
  readonly #info: WindowInfo;
  /** Weak: a window answers only while its table lives (test runners drop whole module graphs). */
  readonly #table: WeakRef<object> | undefined;
  readonly #before: Map<unknown, unknown> | undefined;
  readonly #onCurrent = (message: unknown) => {
    if (this.state === "open" && sameRealm(message)) (message as WindowCurrentMessage).open.push(this.#info);
  };
  readonly #onQuery = (message: unknown) => {
    if (this.#table !== undefined && this.#table.deref() === undefined) {
      channels.windowQuery.unsubscribe(this.#onQuery);
      return;
    }
    if (!sameRealm(message)) return;
    (message as WindowQueryMessage).windows.push({ info: this.#info, state: this.state, outside: this.outside, error: this.error });
  };

  constructor(info: WindowInfo, table: unknown, state: WindowState) {
    this.#info = info;
    this.state = state;
    const entries = listEntries(table);
    this.#table = typeof table === "object" && table !== null ? new WeakRef(table) : undefined;
    this.#before = entries === undefined || state !== "open" ? undefined : new Map(entries);
    channels.windowQuery.subscribe(this.#onQuery);
    if (state !== "open") return;
    channels.windowCurrent.subscribe(this.#onCurrent);
    // A registration module that throws never reaches its end marker. Its graph evaluates
    // synchronously, so a window still open once the current job is over did not finish.
    queueMicrotask(() => {
      if (this.state !== "open") return;
      this.state = "failed";
      channels.windowCurrent.unsubscribe(this.#onCurrent);
    });
  }

  close(): void {
    if (this.state === "done" || this.state === "missing" || this.error !== undefined) return;
    channels.windowCurrent.unsubscribe(this.#onCurrent);
    const table = this.#table?.deref();
    const after = listEntries(table);
    if (table !== undefined && this.#before !== undefined && after !== undefined) {
      const outside: OutsideWrite[] = [];
      for (const [type, impl] of after) {
        const had = this.#before.has(type);
        const op = keyName(type);
        if ((had && this.#before.get(type) === impl) || op === undefined) continue;
        // A key keyName() names is a class or a string.
        const opType = type as Function | string;
        // Changed while the module ran: by a registry (audited there), or directly.
        const asked = ask<TableWrittenMessage>(channels.tableWritten, { version: 1, table, opType, impl, written: false });
        if (!asked.written) outside.push({ op, opType, replaced: had });
      }
      this.outside = outside;
    }
    // A late close (a module that awaited at top level) still counts as finished.
    this.state = "done";
  }

  fail(error: unknown): void {
    channels.windowCurrent.unsubscribe(this.#onCurrent);
    this.state = "failed";
    this.error = summarizeError(error);
  }
}

function tableIn(module: ModuleInfo, namespace: unknown): unknown {
  return typeof namespace === "object" && namespace !== null ? (namespace as Record<string, unknown>)[module.exportName] : undefined;
}

/**
 * Opens the window for a registration module about to evaluate. `namespace` is the dispatch
 * module's namespace (ESM) or exports (CommonJS). A window that already exists for the same module
 * instance and registration module (a second route to the same load) is not opened again.
 */
export function openWindow(info: WindowInfo, module: ModuleInfo, namespace: unknown): Window {
  if (existing(info.id) !== undefined) return done;
  return new OpenWindow(info, tableIn(module, namespace), "open");
}

/** Records a registration module that could not be loaded (it does not exist, say). */
export function missingRegistration(info: WindowInfo, module: ModuleInfo, namespace: unknown, message: string): void {
  if (existing(info.id) !== undefined) return;
  const window = new OpenWindow(info, tableIn(module, namespace), "missing");
  window.error = { name: "Error", message, code: "ERR_DISPATCH_REGISTRATION_MODULE" };
}

/** Runs a registration module through `load`, inside its window; a throw is recorded, not rethrown. */
export function runRegistration(info: WindowInfo, module: ModuleInfo, namespace: unknown, load: () => unknown): void {
  if (existing(info.id) !== undefined) return;
  const window = new OpenWindow(info, tableIn(module, namespace), "open");
  try {
    load();
    window.close();
  } catch (error) {
    window.fail(error);
  }
}
