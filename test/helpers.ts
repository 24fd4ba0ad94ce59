import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { expect } from "vitest";
import type { TableNotice } from "../src/channel.js";
import { hub } from "../src/hub.js";
import type { Impl } from "../src/registry/dispatcher.js";
import { DispatchHookError } from "../src/registry/errors.js";
import type { TableAdapter } from "../src/registry/table-adapter.js";

/** Runs `fn`, expects it to throw a DispatchHookError, and returns the error for its code and words. */
export function thrown(fn: () => unknown): DispatchHookError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DispatchHookError);
    return error as DispatchHookError;
  }
  throw new Error("expected a throw");
}

/** An adapter that keeps a Map table keyed by op name: it writes each op type under its class's name. */
export const byNameAdapter: TableAdapter = {
  kind: "by name",
  get: (t, type) => (t as Map<unknown, Impl>).get(type.name),
  set: (t, type, impl) => {
    (t as Map<unknown, Impl>).set(type.name, impl);
  },
  delete: (t, type) => {
    (t as Map<unknown, Impl>).delete(type.name);
  },
};

/** The framework tables of one backend that the thread's hub knows now. */
export function tablesOf(backend: string): TableNotice[] {
  return hub()
    .allTables()
    .filter((notice) => notice.namespace === "dispatch" && notice.backend === backend);
}

/**
 * Collects garbage a few times, letting finalizers run in between; with `done`, goes on (up to 50
 * rounds) until it holds, since on a loaded machine a finalizer may run a few turns later.
 */
export async function collect(done?: () => boolean): Promise<void> {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  for (let i = 0; i < 4 || (done !== undefined && !done() && i < 50); i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, i < 4 ? 0 : 10));
  }
}
