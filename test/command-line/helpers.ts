import type { Io } from "../../src/cli/io.js";

/** An in-memory Io for running commands in-process. */
export function memoryIo(
  cwd: string,
  options: { isTTY?: boolean; env?: Record<string, string | undefined> } = {},
): Io & { stdout: () => string; stderr: () => string } {
  let out = "";
  let err = "";
  return {
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
    cwd,
    env: { ...process.env, NO_COLOR: undefined, ...options.env },
    isTTY: options.isTTY ?? false,
    stdout: () => out,
    stderr: () => err,
  };
}
