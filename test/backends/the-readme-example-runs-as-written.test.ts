// The README's backend selection example, pasted into a file as a new user would, prints what its
// comments say.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeTree, repoRoot, run } from "../integration/fixture.js";

describe("the README's 'Choosing a backend per call'", () => {
  it("runs as written and prints what its comments say", async () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    const from = readme.indexOf("### Choosing a backend per call");
    const section = readme.slice(from, readme.indexOf("\n### ", from + 1));
    const code = /```js\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
    const expected = [...code.matchAll(/\/\/ prints: (.*)$/gm)].map((m) => m[1]);
    expect(expected).toHaveLength(3);
    const dir = makeTree({ "node_modules/dispatch-hook": { symlink: "<repo>" }, "package.json": "{}", "example.mjs": code });
    const result = await run(dir, ["example.mjs"]);
    expect(result.stderr).toBe("");
    expect(result.stdout.trim().split("\n")).toEqual(expected);
  });
});
