/**
 * Attaching the hooks with the API the Node version supports (see hook-mode.ts): registerHooks
 * in-thread, or module.register with a hooks thread that reports back through a port.
 */
import type { MessagePort } from "node:worker_threads";
import { fs, nodeModule, url as urls, workerThreads } from "../builtins.js";
import { DispatchHookError } from "../registry/errors.js";
import { type DiscoverOptions, Discovery } from "./discovery.js";
import type { HookMode } from "./hook-mode.js";
import type { HooksData } from "./hooks-thread.js";
import type { HookReport } from "./module-facts.js";
import { createHooks } from "./node-hooks.js";

export interface AttachedHooks {
  /** Delivers reports still in flight from the hooks thread (none in-thread). */
  drain(): void;
  /** Tells the hooks that a registration module has finished (see HookOptions.ran). */
  ran(registrationModule: string): void;
  detach(): void;
}

/** How long a question waits for the hooks thread's config before it is answered without it. */
const CONFIG_WAIT_MS = 10_000;

// Unique per installation even across two bundles (or copies) of this module in one process.
let attached = 0;
const instance = Math.random().toString(36).slice(2, 10);

/** Where the runtime that generated code imports lives: beside this bundle, or in dist/bundle for the per-file build. */
export function runtimeLocation(): { esm: string; cjs: string } {
  const dir = ["./", "../bundle/"].find((d) => fs.existsSync(new URL(`${d}runtime.js`, import.meta.url))) ?? "./";
  return { esm: new URL(`${dir}runtime.js`, import.meta.url).href, cjs: urls.fileURLToPath(new URL(`${dir}runtime.cjs`, import.meta.url)) };
}

type RegisterHooks = (hooks: { resolve?: unknown; load?: unknown }) => { deregister(): void };
type HookPair = Pick<ReturnType<typeof createHooks>, "resolve" | "load">;

/**
 * In-thread hooks (module.registerHooks). Every hook Node calls costs each module as much as a whole
 * do-nothing hook, and load() serves only generated modules: it is attached when resolve() hands out
 * a generated module's URL Node has not loaded, and detached once every such module has loaded, so
 * the modules before the first dispatch module and after the last skip it.
 */
export function attachInThread(
  registerHooks: RegisterHooks,
  create: (wiring: { needLoad: () => void; idle: () => void; ran: (module: string) => boolean }) => HookPair,
): AttachedHooks {
  const finished = new Set<string>();
  let loadHandle: { deregister(): void } | undefined;
  let detached = false;
  const needLoad = () => {
    if (loadHandle === undefined && !detached) loadHandle = registerHooks({ load: hooks.load });
  };
  const idle = () => {
    loadHandle?.deregister();
    loadHandle = undefined;
  };
  const hooks = create({ needLoad, idle, ran: (module) => finished.has(module) });
  const handle = registerHooks({ resolve: hooks.resolve });
  return {
    drain() {},
    ran: (module) => finished.add(module),
    detach: () => {
      detached = true;
      handle.deregister();
      loadHandle?.deregister();
    },
  };
}

export function attachHooks(
  mode: Exclude<HookMode, "none">,
  /** The installation's discovery, for in-thread hooks; the hooks thread makes its own. */
  discovery: Discovery | undefined,
  discoverOptions: DiscoverOptions,
  onReport: (report: HookReport) => void,
): AttachedHooks {
  const runtime = runtimeLocation();
  if (mode === "registerHooks") {
    const api = nodeModule as unknown as { registerHooks?: (hooks: object) => { deregister(): void } };
    if (typeof api.registerHooks !== "function") {
      throw new DispatchHookError(
        "ERR_DISPATCH_HOOK_UNAVAILABLE",
        `install(): module.registerHooks does not exist on Node ${process.versions.node}. Use mode "register", or leave mode unset.`,
      );
    }
    return attachInThread(api.registerHooks.bind(api), (wiring) =>
      createHooks({ discovery: discovery ?? new Discovery(discoverOptions), mode, runtime, report: onReport, ...wiring }),
    );
  }
  if (typeof nodeModule.register !== "function") {
    throw new DispatchHookError(
      "ERR_DISPATCH_HOOK_UNAVAILABLE",
      `install(): module.register does not exist on Node ${process.versions.node}.`,
    );
  }
  const threads = workerThreads();
  const { port1, port2 } = new threads.MessageChannel();
  // The hooks thread reads the config after register() returns (see hooks-thread.ts). The port
  // keeps the process alive until the config has arrived, so that even an app that ends at once
  // gets its config warnings; then it lets go.
  let configArrived = false;
  let late = false;
  const receive = (message: HookReport) => {
    if (message.type === "config" && !configArrived) {
      configArrived = true;
      port1.unref();
    }
    onReport(message);
  };
  port1.on("message", receive);
  const disposed = new Int32Array(new SharedArrayBuffer(4));
  const configured = new Int32Array(new SharedArrayBuffer(4));
  const data: HooksData = { discover: discoverOptions, runtime, port: port2 as MessagePort, disposed, configured };
  // A query per installation gives each its own instance of the hooks module, and so its own state.
  const url = new URL(`./hooks-thread.js?installation=${instance}-${++attached}`, import.meta.url);
  nodeModule.register(url.href, { data, transferList: [port2] });
  return {
    drain() {
      // Whoever asks (an audit, a miss, the config) gets the config the hooks thread read, waiting
      // for it if it is still being read: a few milliseconds, at most once.
      if (!configArrived && !late && Atomics.wait(configured, 0, 0, CONFIG_WAIT_MS) === "timed-out") {
        late = true;
        process.emitWarning(
          `dispatch-hook's hooks thread did not report its config within ${CONFIG_WAIT_MS / 1000} s; answers until it does leave it out.`,
          { code: "DISPATCH_HOOK_CONFIG_LATE" },
        );
      }
      for (let m = threads.receiveMessageOnPort(port1); m !== undefined; m = threads.receiveMessageOnPort(port1))
        receive(m.message as HookReport);
    },
    // The hooks thread reads these when it next serves a dispatch module with plugins. Not on Node
    // 22.2.0, whose one hooks thread served every worker too (reverted in 22.3): a module finished
    // in this thread has not run in a worker.
    ran: process.versions.node === "22.2.0" ? () => {} : (module) => port1.postMessage({ ran: module }),
    detach() {
      // module.register cannot be undone; the hooks on the other thread stop changing anything,
      // from the very next module on.
      Atomics.store(disposed, 0, 1);
      port1.close();
    },
  };
}
