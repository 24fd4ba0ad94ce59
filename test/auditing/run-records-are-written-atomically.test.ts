import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeDirectory, writeFileAtomically, writeRecord } from "../../src/registry/run-records.js";
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

describe("makeDirectory (a run directory, one level at a time)", () => {
  it("makes every missing level, and accepts one that exists", () => {
    const root = makeTree({});
    makeDirectory(join(root, "a", "b", "c"));
    expect(statSync(join(root, "a", "b", "c")).isDirectory()).toBe(true);
    makeDirectory(join(root, "a", "b", "c"));
    makeDirectory(join(root, "a", "b", "c", "..", "d"));
    expect(readdirSync(join(root, "a", "b")).sort()).toEqual(["c", "d"]);
  });

  it("refuses a file, a dangling link, and a path under a file, making nothing", () => {
    const root = makeTree({ file: "x" });
    symlinkSync(join(root, "nowhere"), join(root, "dangling"));
    expect(() => makeDirectory(join(root, "file"))).toThrow(/ENOTDIR/);
    expect(() => makeDirectory(join(root, "dangling"))).toThrow(/ENOENT/);
    expect(() => makeDirectory(join(root, "file", "run"))).toThrow(/ENOTDIR/);
    expect(existsSync(join(root, "nowhere"))).toBe(false);
  });

  // Node's recursive mkdirSync retries forever there.
  it.runIf(existsSync("/proc/self"))("throws under /proc, where mkdir of a missing child fails with ENOENT", () => {
    expect(() => makeDirectory("/proc/dispatch-hook-x/y")).toThrow(/ENOENT/);
  });
});

describe("writeRecord", () => {
  it("a record named by the test files it ran carries none of the runner's own arguments; one of a program carries them", () => {
    const dir = makeTree({});
    const report = { ok: true, checked: 0, registrations: [], outside: [], plugins: [], backends: [], problems: [], notes: [] };
    // A runner started with arguments of its own (a worker may have none, and then nothing would show).
    const argv = process.argv;
    process.argv = [...argv.slice(0, 2), "-i", "--silent"];
    try {
      writeRecord(dir, report, null, "/app/test/gpu.test.js");
      const [file] = readdirSync(dir);
      const record = JSON.parse(readFileSync(join(dir, file as string), "utf8"));
      expect(record).toMatchObject({ entry: "/app/test/gpu.test.js", argv: [] });
      writeRecord(dir, report, 0);
      const again = JSON.parse(readFileSync(join(dir, file as string), "utf8"));
      expect(again.argv).toEqual(process.argv.slice(2));
      expect(again.entry).not.toBe("/app/test/gpu.test.js");
    } finally {
      process.argv = argv;
    }
  });
});
