import { expect } from "vitest";
import { DispatchHookError } from "../src/registry/errors.js";

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
