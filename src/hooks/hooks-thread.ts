/**
 * The hooks-thread entry for `module.register` (Node 20, and 22/24 before their registerHooks
 * fixes). Node calls `initialize`, `resolve` and `load` on its hooks thread. install() registers
 * this file under a URL with a query unique to the installation, so each installation gets its own
 * module instance and its own state here.
 */
import type { MessagePort } from "node:worker_threads";
import { type DiscoverOptions, Discovery } from "./discovery.js";
import { createHooks, type HookReport, type LoadResult, type ResolveResult } from "./node-hooks.js";

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
}

type Next<T> = (value: string, context?: object) => T | Promise<T>;
let hooks: ReturnType<typeof createHooks> | undefined;

export function initialize(data: HooksData): void {
  const { port, disposed } = data;
  const discovery = new Discovery(data.discover);
  // The installation reads the config from here, not on its own thread (see install.ts).
  port.postMessage({ type: "config", config: discovery.config() } satisfies HookReport);
  hooks = createHooks({
    discovery,
    mode: "register",
    runtime: data.runtime,
    report: (message) => port.postMessage(message),
    enabled: () => Atomics.load(disposed, 0) === 0,
  });
  port.unref();
}

export async function resolve(specifier: string, context: object, nextResolve: Next<ResolveResult>): Promise<ResolveResult> {
  return hooks === undefined ? nextResolve(specifier, context) : hooks.resolve(specifier, context, nextResolve);
}

export async function load(url: string, context: object, nextLoad: Next<LoadResult>): Promise<LoadResult> {
  return hooks === undefined ? nextLoad(url, context) : hooks.load(url, context, nextLoad);
}
