import type { MessagePort } from "node:worker_threads";
import type { Registry } from "../registry/registry.js";
import {
  channels,
  type LoaderFinding,
  type LoaderStatusMessage,
  type ModuleEvaluatedMessage,
  type TableNotice,
  type TableQueryMessage,
} from "./channel.js";
import { type BackendDeclaration, type DispatchHookField, discover, type HookConfig } from "./config.js";
import { type HookMode, hookMode } from "./hook-mode.js";
import { Matcher } from "./matcher.js";
import { createSyncLoad, type HookReport, type HooksData } from "./node-hooks.js";

// process.getBuiltinModule, not `import`: building the ES module facade of a builtin costs
// start-up time (node:fs alone about 3 ms), and the loader runs at the start of every process.
const module = process.getBuiltinModule("node:module");
const { pathToFileURL } = process.getBuiltinModule("node:url");

export interface PluginOptions {
  readonly name?: string;
  /** The plugin's directory; its registration paths resolve against it (default: root). */
  readonly root?: string;
  readonly registrations?: Readonly<Record<string, string>>;
  readonly expects?: Readonly<Record<string, readonly string[]>>;
}

export interface InstallOptions {
  /** The app's directory (default: the nearest package.json at or above the working directory). */
  readonly root?: string;
  /** Backends declared in code, as in package.json `dispatchHook.backends`. */
  readonly backends?: Readonly<Record<string, BackendDeclaration>>;
  /** Plugins declared in code. */
  readonly plugins?: readonly PluginOptions[];
  /** The registry to feed expectations and loader findings into. */
  readonly registry?: Registry;
  /** Read package.json files (default true). */
  readonly discover?: boolean;
  /** A JSON file holding a dispatchHook field (default: DISPATCH_HOOK_CONFIG). */
  readonly configFile?: string;
  /** Force a hook API; by default the Node version decides (see hook-mode.ts). */
  readonly mode?: Exclude<HookMode, "none">;
  /** Emit process warnings for configuration problems and failures (default true). */
  readonly warnings?: boolean;
}

/** One installation of the hooks. Everything it knows is its own; dispose() removes what it can. */
export interface Installation extends Disposable {
  readonly mode: HookMode;
  /** What was read; `config.problems` lists what was wrong with it. */
  readonly config: HookConfig;
  /** Module instances that signalled, in order. */
  signalled(): readonly TableNotice[];
  /** Module URLs the hooks instrumented (drained from the hooks thread on Node 20). */
  instrumented(): readonly string[];
  /** What the loader could not see or do, each with its backend: see LoaderFinding. */
  findings(): readonly LoaderFinding[];
  dispose(): void;
}

// Unique per installation even across two bundles (or copies) of this module in one process.
let installations = 0;
const instance = Math.random().toString(36).slice(2, 10);
const installOptionKeys = new Set(["root", "backends", "plugins", "registry", "discover", "configFile", "mode", "warnings"]);

/**
 * Installs the loader hooks: the one process-wide act of dispatch-hook. It reads the config,
 * registers the hooks with the API the Node version supports, and remembers the dispatch modules
 * that signal, so that registries created later still find their tables.
 */
export function install(options: InstallOptions = {}): Installation {
  for (const key of Object.keys(options)) {
    if (!installOptionKeys.has(key))
      throw new TypeError(`install(): unknown option ${JSON.stringify(key)}; known options are ${[...installOptionKeys].join(", ")}.`);
  }
  const inline: Array<{ field: DispatchHookField; dir?: string; name?: string }> = [];
  if (options.backends !== undefined) inline.push({ field: { backends: options.backends } });
  for (const plugin of options.plugins ?? []) {
    const field: DispatchHookField = {
      ...(plugin.registrations === undefined ? {} : { registrations: plugin.registrations }),
      ...(plugin.expects === undefined ? {} : { expects: plugin.expects }),
    };
    inline.push({
      field,
      ...(plugin.root === undefined ? {} : { dir: plugin.root }),
      ...(plugin.name === undefined ? {} : { name: plugin.name }),
    });
  }
  const config = discover({
    ...(options.root === undefined ? {} : { root: options.root }),
    configFile: options.configFile ?? (process.env.DISPATCH_HOOK_CONFIG || undefined),
    inline,
    packages: options.discover !== false,
  });
  const warn = options.warnings !== false;
  for (const problem of config.problems) {
    if (warn) process.emitWarning(`${problem.message}. ${problem.fix}`, { code: problem.code });
  }
  const registry = options.registry;
  for (const plugin of config.plugins) {
    for (const [backend, ops] of Object.entries(plugin.expects)) registry?.expect(backend, ops, plugin.declaredIn);
  }

  const matcher = new Matcher(config.rules, config.plugins);
  const signalled: TableNotice[] = [];
  const instrumented = new Map<string, string>();
  const failures = new Map<string, LoaderFinding>();
  const onReport = (message: HookReport) => {
    if (message.type === "instrumented") {
      instrumented.set(message.url, message.backend);
      return;
    }
    const finding: LoaderFinding = {
      backend: message.backend,
      module: message.url,
      problem: "instrument-failed",
      message: `${message.url} could not be instrumented (${message.message}); it loaded unchanged, so its ${message.backend} table never signalled.`,
    };
    if (!failures.has(message.url)) {
      failures.set(message.url, finding);
      if (warn) process.emitWarning(finding.message, { code: "DISPATCH_HOOK_INSTRUMENT_FAILED" });
    }
  };

  const mode = options.mode ?? hookMode();
  let deregister: (() => void) | undefined;
  let port: MessagePort | undefined;
  let receive: ((port: MessagePort) => { message: unknown } | undefined) | undefined;
  const id = ++installations;
  if (mode === "registerHooks") {
    const api = module as unknown as { registerHooks?: (hooks: object) => { deregister(): void } };
    if (typeof api.registerHooks !== "function")
      throw new Error(`install(): module.registerHooks is not available on Node ${process.versions.node}.`);
    const handle = api.registerHooks({ load: createSyncLoad(matcher, onReport) });
    deregister = () => handle.deregister();
  } else if (mode === "register") {
    // Loaded only here: worker_threads costs start-up time that the registerHooks path never needs.
    const threads = process.getBuiltinModule("node:worker_threads");
    receive = threads.receiveMessageOnPort;
    const { port1, port2 } = new threads.MessageChannel();
    port = port1;
    port1.on("message", onReport);
    port1.unref();
    const data: HooksData = { rules: config.rules, plugins: config.plugins, port: port2 };
    // A query per installation gives each its own instance of the hooks module, and so its own state.
    const hooksUrl = new URL(`./node-hooks.js?installation=${instance}-${id}`, import.meta.url);
    module.register(hooksUrl.href, { data, transferList: [port2] });
  }

  const drain = () => {
    if (port === undefined || receive === undefined) return;
    for (let m = receive(port); m !== undefined; m = receive(port)) onReport(m.message as HookReport);
  };

  const findings = (): LoaderFinding[] => {
    drain();
    const seen = new Set(signalled.map((n) => n.module));
    const out: LoaderFinding[] = [...failures.values()];
    for (const [url, backend] of instrumented) {
      if (seen.has(url) || failures.has(url)) continue;
      out.push({
        backend,
        module: url,
        problem: "unsignalled",
        message: `${url} was instrumented but never finished evaluating (it threw, or is still waiting in an import cycle).`,
      });
    }
    // Node 20's off-thread hooks never see require(). Say so for every watched module that
    // require() loaded, instead of staying silent.
    const cache = module.createRequire(import.meta.url).cache;
    for (const filename of Object.keys(cache)) {
      const url = pathToFileURL(filename).href;
      if (seen.has(url) || instrumented.has(url)) continue;
      const plan = matcher.match(url);
      if (plan === undefined) continue;
      out.push({
        backend: plan.backend,
        module: url,
        problem: "unsignalled",
        message:
          `${url} was loaded with require(), which the ${mode} hooks of Node ${process.versions.node} cannot see, so its ${plan.backend} table never signalled. ` +
          "Load it through import, or run Node >=22.22.3 or >=24.11.1, where dispatch-hook uses module.registerHooks and sees require().",
      });
    }
    return out;
  };

  const onEvaluated = (message: unknown) => {
    const m = message as ModuleEvaluatedMessage;
    if (typeof m !== "object" || m === null || m.version !== 1) return;
    signalled.push({ via: "hook", backend: m.backend, module: m.url, namespace: m.namespace, exportName: m.exportName });
  };
  const onQuery = (message: unknown) => {
    (message as TableQueryMessage).answers.push(...signalled);
  };
  const backends = [...new Set(config.rules.map((rule) => rule.backend ?? "{backend}"))];
  const onStatus = (message: unknown) => {
    (message as LoaderStatusMessage).installations.push({ mode, backends, findings: findings() });
  };
  channels.moduleEvaluated.subscribe(onEvaluated);
  channels.tableQuery.subscribe(onQuery);
  channels.loaderStatus.subscribe(onStatus);

  let disposed = false;
  const dispose = () => {
    if (disposed) return;
    disposed = true;
    deregister?.();
    // module.register cannot be undone; the hooks on the other thread stop instrumenting instead.
    port?.postMessage({ type: "disable" });
    port?.close();
    channels.moduleEvaluated.unsubscribe(onEvaluated);
    channels.tableQuery.unsubscribe(onQuery);
    channels.loaderStatus.unsubscribe(onStatus);
  };
  return {
    mode,
    config,
    signalled: () => signalled.slice(),
    instrumented: () => {
      drain();
      return [...instrumented.keys()];
    },
    findings,
    dispose,
    [Symbol.dispose]: dispose,
  };
}
