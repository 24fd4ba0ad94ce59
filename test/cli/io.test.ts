import { describe, expect, it } from "vitest";
import { processIo } from "../../src/cli/io.js";

describe("processIo", () => {
  it("writes to the process streams and reports the working directory", () => {
    const io = processIo();
    expect(io.cwd).toBe(process.cwd());
    expect(io.env).toBe(process.env);
    expect(typeof io.isTTY).toBe("boolean");
    const writes: string[] = [];
    const original = process.stdout.write;
    process.stdout.write = ((chunk: string) => {
      writes.push(chunk);
      return true;
    }) as typeof process.stdout.write;
    try {
      io.out("hello");
    } finally {
      process.stdout.write = original;
    }
    expect(writes).toEqual(["hello"]);
  });
});
