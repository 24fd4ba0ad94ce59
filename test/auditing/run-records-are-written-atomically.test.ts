import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeFileAtomically } from "../../src/registry/run-records.js";
import { makeTree } from "../integration/fixture.js";

describe("writeFileAtomically", () => {
  it("writes a new file and replaces an old one, leaving nothing else beside it", () => {
    const root = makeTree({ "old.txt": "old" });
    writeFileAtomically(join(root, "new.txt"), "new");
    writeFileAtomically(join(root, "old.txt"), new Uint8Array([104, 105]));
    expect(readFileSync(join(root, "new.txt"), "utf8")).toBe("new");
    expect(readFileSync(join(root, "old.txt"), "utf8")).toBe("hi");
    expect(readdirSync(root).sort()).toEqual(["new.txt", "old.txt"]);
  });

  it("throws when the rename fails, and removes its temporary file", () => {
    const root = makeTree({});
    // A directory that is not empty cannot be replaced by a file.
    mkdirSync(join(root, "taken", "inside"), { recursive: true });
    expect(() => writeFileAtomically(join(root, "taken"), "x")).toThrow();
    expect(readdirSync(root)).toEqual(["taken"]);
  });

  it("throws when the directory does not exist", () => {
    const root = makeTree({});
    expect(() => writeFileAtomically(join(root, "missing", "file.txt"), "x")).toThrow(/ENOENT/);
    expect(readdirSync(root)).toEqual([]);
  });
});
