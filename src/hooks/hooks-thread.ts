/**
 * The hooks-thread entry for `module.register` (Node 20, and 22/24 before their registerHooks fixes).
 * install() registers it under a URL with a query unique to the installation: its own instance and state.
 */
import type { MessagePort } from "node:worker_threads";
import { workerThreads } from "../builtins.js";
import { type DiscoverOptions, Discovery, emptyConfig } from "./discovery.js";
import type { HookReport, LoadResult, ResolveResult } from "./module-facts.js";
import { createHooks } from "./node-hooks.js";

/** What install() passes to `initialize`. Plain data, plus the port back to the installation. */
export interface HooksData {
  readonly discover: DiscoverOptions;
  readonly runtime: { readonly esm: string; readonly cjs: string };
  readonly port: MessagePort;
  /**
   * Shared with the installation: non-zero once it is disposed. A message would arrive too late:
   * the next import's resolve can reach this thread before it.
   */
  readonly disposed: Int32Array;
  /** Shared with the installation: non-zero once the config has been posted to `port`. */
  readonly configured: Int32Array;
}

type Next<T> = (value: string, context?: object) => T | Promise<T>;
type Hooks = ReturnType<typeof createHooks>;
let ready: (() => Hooks) | undefined;

export function initialize(data: HooksData): void {
  const { port, disposed, configured } = data;
  let hooks: Hooks | undefined;
  ready = () => {
    if (hooks !== undefined) return hooks;
    try {
      let discovery: Discovery;
      try {
        discovery = new Discovery(data.discover);
      } catch (error) {
        // Not expected (discovery records problems instead of throwing), but an exception here
        // would end the process from this thread: report it, and pass every module through.
        const message = `its config could not be read (${error instanceof Error ? error.message : String(error)})`;
        port.postMessage({ type: "config", config: emptyConfig() } satisfies HookReport);
        port.postMessage({ type: "failed", url: "dispatch-hook", backend: "?", message } satisfies HookReport);
        hooks = {
          resolve: (specifier, context, next) => next(specifier, context),
          load: (url, context, next) => next(url, context),
          disable() {},
        };
        return hooks;
      }
      // The installation reads the config from here, not on its own thread (see install.ts).
      port.postMessage({ type: "config", config: discovery.config() } satisfies HookReport);
      // Registration modules the installation saw finish, as it posted them (see AttachedHooks.ran).
      const finished = new Set<string>();
      hooks = createHooks({
        discovery,
        mode: "register",
        runtime: data.runtime,
        report: (message) => port.postMessage(message),
        enabled: () => Atomics.load(disposed, 0) === 0,
        ran: (module) => {
          for (let m = workerThreads().receiveMessageOnPort(port); m !== undefined; m = workerThreads().receiveMessageOnPort(port))
            finished.add((m.message as { ran: string }).ran);
          return finished.has(module);
        },
      });
      return hooks;
    } finally {
      Atomics.store(configured, 0, 1);
      Atomics.notify(configured, 0);
    }
  };
  // module.register() keeps the main thread waiting until initialize returns. The config is read
  // right after instead, while the main thread goes on (a CommonJS app never waits for it again),
  // and in any case before the first hook runs.
  setImmediate(ready);
  port.unref();
}

export async function resolve(specifier: string, context: object, nextResolve: Next<ResolveResult>): Promise<ResolveResult> {
  return ready === undefined ? nextResolve(specifier, context) : ready().resolve(specifier, context, nextResolve);
}

export async function load(url: string, context: object, nextLoad: Next<LoadResult>): Promise<LoadResult> {
  return ready === undefined ? nextLoad(url, context) : ready().load(url, context, nextLoad);
}
