import { describe, expect, it } from "vitest";
import { loaderFindings } from "../../src/hooks/loader-findings.js";
import { Matcher } from "../../src/hooks/matcher.js";
import { hub } from "../../src/hub.js";

const rule = { declaredIn: "p", packageName: "never-installed-fw", roots: [], subpath: "cpu.js", backend: "cpu", exportName: "cpuTable" };

describe("loaderFindings", () => {
  it("names a watched module that loaded but never signalled, and forgets it once it has", () => {
    const href = "file:///app/node_modules/never-installed-fw/cpu.js";
    const record = { mode: "registerHooks" as const, loaded: new Map([[href, "cpu"]]), failures: new Map(), matcher: new Matcher([rule]) };
    expect(loaderFindings(record)).toMatchObject([{ backend: "cpu", module: href, problem: "unsignalled" }]);
    expect(loaderFindings(record)[0]?.message).toContain("was loaded but never finished evaluating");
    hub().announce({
      via: "hook",
      namespace: "dispatch",
      backend: "cpu",
      module: href,
      exports: { cpuTable: new Map() },
      exportName: "cpuTable",
    });
    expect(loaderFindings(record)).toEqual([]);
  });

  it("passes on failures as they were reported", () => {
    const failure = { backend: "cpu", module: "file:///x.js", problem: "instrument-failed" as const, message: "x" };
    const record = {
      mode: "register" as const,
      loaded: new Map(),
      failures: new Map([["file:///x.js", failure]]),
      matcher: new Matcher([]),
    };
    expect(loaderFindings(record)).toEqual([failure]);
  });
});
