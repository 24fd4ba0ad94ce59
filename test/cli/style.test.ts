import { describe, expect, it } from "vitest";
import { createStyle } from "../../src/cli/style.js";

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
