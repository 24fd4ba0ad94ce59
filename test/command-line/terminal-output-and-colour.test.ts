import { describe, expect, it } from "vitest";
import { createStyle, processIo } from "../../src/cli/io.js";

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

describe("createStyle", () => {
  it("colours only on a TTY, and honours NO_COLOR and TERM=dumb", () => {
    expect(createStyle({ isTTY: true }, {}).red("x")).toBe("\x1b[31mx\x1b[39m");
    expect(createStyle({ isTTY: true }, {}).bold("x")).toBe("\x1b[1mx\x1b[22m");
    expect(createStyle({ isTTY: false }, {}).red("x")).toBe("x");
    expect(createStyle({}, {}).green("x")).toBe("x");
    expect(createStyle({ isTTY: true }, { NO_COLOR: "1" }).red("x")).toBe("x");
    expect(createStyle({ isTTY: true }, { TERM: "dumb" }).dim("x")).toBe("x");
  });
});
