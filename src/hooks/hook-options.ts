/** What an installation gives its hooks, and what the hooks tell it back (over a port on Node 20). */
import type { Discovery, HookConfig } from "./discovery.js";
import type { ModulePlan } from "./matcher.js";

/** What the hooks tell their installation. Crosses the thread boundary on Node 20. */
export type HookReport =
  | { readonly type: "facade"; readonly url: string; readonly backend: string }
  | { readonly type: "failed"; readonly url: string; readonly backend: string; readonly message: string }
  | { readonly type: "config"; readonly config: HookConfig };

/** Which modules are watched, and how; rebuilt when discovery learns something. */
export interface WatchList {
  watches(url: string): boolean;
  match(url: string): ModulePlan | undefined;
}

export interface HookOptions {
  readonly discovery: Pick<Discovery, "version" | "config" | "learn"> & Partial<Pick<Discovery, "formatOf">>;
  /** Builds the watch list from the config (default: a Matcher). The corpus test watches everything. */
  readonly watchList?: (config: HookConfig) => WatchList;
  readonly mode: "registerHooks" | "register";
  /** The runtime that ES facades import (a file URL) and CommonJS facades require (a path). */
  readonly runtime: { readonly esm: string; readonly cjs: string };
  readonly report: (message: HookReport) => void;
  /** Whether the installation still wants changes made (default: until disable()). */
  readonly enabled?: () => boolean;
  /**
   * Called before resolve() hands out a virtual URL, which only load() can serve: in-thread hooks
   * attach load() then (see hook-api.ts), so that the modules loaded before the first watched one
   * do not pass through it.
   */
  readonly needLoad?: () => void;
  /**
   * Called (from resolve(), never while load() builds a generated module) once every generated
   * module handed out has been loaded: in-thread hooks detach load() then, until needLoad() asks
   * again. Node builds each load's hook chain when the load starts, so a load already running
   * keeps it either way.
   */
  readonly idle?: () => void;
  /**
   * Whether a registration module has finished in the installation's thread, for an earlier
   * instance of its dispatch module. Once every one has, a new instance (`?v=2`) needs no windows.
   */
  readonly ran?: (registrationModule: string) => boolean;
}
