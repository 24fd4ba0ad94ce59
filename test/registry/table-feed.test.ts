import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { channels } from "../../src/channel.js";
import { TableFeed } from "../../src/registry/table-feed.js";
import { repoRoot } from "../integration/fixture.js";

function feed(target: object) {
  const heard: string[] = [];
  const handlers = {
    evaluated: () => heard.push("evaluated"),
    provided: () => heard.push("provided"),
    miss: () => heard.push("miss"),
    collect: () => {
      heard.push("collect");
      throw new Error("a handler that throws never reaches the publisher");
    },
    written: () => heard.push("written"),
  };
  return { feed: new TableFeed(target, handlers), heard };
}

describe("TableFeed", () => {
  it("answers the audit and misses from join() to leave(), and listens for tables only while asked", () => {
    const { feed: f, heard } = feed({});
    const publishAll = () => {
      for (const channel of [
        channels.moduleEvaluated,
        channels.tableProvided,
        channels.dispatchMiss,
        channels.auditCollect,
        channels.tableWritten,
      ])
        channel.publish({});
    };
    publishAll();
    expect(heard).toEqual([]);
    f.join();
    publishAll();
    expect(heard).toEqual(["miss", "collect", "written"]);
    expect(f.listen(true)).toBe(true);
    expect(f.listen(true)).toBe(false);
    heard.length = 0;
    publishAll();
    expect(heard).toEqual(["evaluated", "provided", "miss", "collect", "written"]);
    f.leave();
    heard.length = 0;
    publishAll();
    expect(heard).toEqual([]);
  });

  it("holds its target strongly only while told to, and lets go of it otherwise (in a process with --expose-gc)", () => {
    const script = [
      `import { TableFeed } from ${JSON.stringify(pathToFileURL(join(repoRoot, "dist/registry/table-feed.js")).href)};`,
      "const noop = () => {};",
      "const collect = async () => { for (let i = 0; i < 3; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 0)); } };",
      "const make = () => { const target = {}; const feed = new TableFeed(target, { evaluated: noop, provided: noop, miss: noop, collect: noop, written: noop }); feed.join(); return { feed, weak: new WeakRef(target) }; };",
      "const held = make(); held.feed.hold(true);",
      "const free = make(); free.feed.hold(false);",
      "await collect();",
      "console.log(JSON.stringify({ held: held.weak.deref() !== undefined, free: free.weak.deref() !== undefined }));",
    ].join("\n");
    const out = execFileSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], { encoding: "utf8" });
    expect(JSON.parse(out)).toEqual({ held: true, free: false });
  });
});
