/**
 * The Node builtins dispatch-hook uses, through process.getBuiltinModule (Node >= 20.16), not `import`:
 * a builtin's ES module facade costs start-up time (node:fs about 3 ms on Node 24), in every process.
 */
export const diagnosticsChannel = process.getBuiltinModule("node:diagnostics_channel");
export const fs = process.getBuiltinModule("node:fs");
export const path = process.getBuiltinModule("node:path");
export const url = process.getBuiltinModule("node:url");
export const nodeModule = process.getBuiltinModule("node:module");

/** Loaded only where needed: worker_threads costs start-up time that most paths never need. */
export function workerThreads(): typeof import("node:worker_threads") {
  return process.getBuiltinModule("node:worker_threads");
}

/** Loaded the first time scoped backend options are used. */
export function asyncHooks(): typeof import("node:async_hooks") {
  return process.getBuiltinModule("node:async_hooks");
}

let frames: boolean | undefined;
/** Whether AsyncLocalStorage keeps its store in context frames (Node 24 and later), not on each async resource (Node 20, 22). */
export function contextFrames(): boolean {
  frames ??= typeof (new (asyncHooks().AsyncLocalStorage)() as { kResourceStore?: unknown }).kResourceStore !== "symbol";
  return frames;
}
/** Loaded where needed: node:crypto alone costs about 2 ms of start-up on Node 24. */
export function crypto(): typeof import("node:crypto") {
  return process.getBuiltinModule("node:crypto");
}
export function os(): typeof import("node:os") {
  return process.getBuiltinModule("node:os");
}
export function util(): typeof import("node:util") {
  return process.getBuiltinModule("node:util");
}
/** Node's own timers, for a callback a test runner's fake timers must not hold back. */
export function timers(): typeof import("node:timers") {
  return process.getBuiltinModule("node:timers");
}
