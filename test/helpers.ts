import { expect } from "vitest";
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
