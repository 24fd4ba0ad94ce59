import { describe, expect, it } from "vitest";
import { hub } from "../../src/hub.js";
import { createRegistry } from "../../src/registry/registry.js";
import { threadAudit } from "../../src/registry/thread-audit.js";

class Conv {}

describe("threadAudit", () => {
  it("hears every registry in the thread, and of every copy, until it is disposed", () => {
    const a = createRegistry({ name: "a" });
    const b = createRegistry({ name: "b" });
    a.register("ta", Conv, () => 1);
    b.register("tb", Conv, () => 2);
    // A registry of another copy of the package answers the same way, from its own directory.
    const foreign = {
      namespace: "dispatch",
      name: "default",
      copy: "/elsewhere/dispatch-hook",
      table: () => {},
      miss: () => {},
      wrote: () => false,
      events: () => [{ kind: "requested", seq: 0, id: 0, backend: "tc", op: "Conv", site: "x.js:1" }],
    };
    hub().join(foreign);
    try {
      const report = threadAudit();
      expect(report.registrations.map((r) => [r.registry?.split(" ")[0], r.backend])).toEqual([
        ["a", "ta"],
        ["b", "tb"],
        ["default", "tc"],
      ]);
      expect(report.registrations[2]?.registry).toBe("default (/elsewhere/dispatch-hook)");
      a.dispose();
      expect(threadAudit().registrations.map((r) => r.backend)).toEqual(["tb", "tc"]);
      // No loader in this thread: nothing could serve tb.
      expect(threadAudit({ backends: ["tb"] }).problems.map((p) => [p.kind, p.backend])).toEqual([
        ["pending", "tb"],
        ["no-loader", "tb"],
      ]);
    } finally {
      hub().leave(foreign);
      b.dispose();
    }
  });

  it("counts a backend set's registrations under its namespace, never for a framework backend of the same name", () => {
    class Add {}
    const framework = createRegistry({ name: "framework" });
    const privateSet = createRegistry({ name: "set", namespace: "backends:audit-test" });
    framework.expect("ta-cpu", ["Add"], "test");
    framework.provide("ta-cpu", new Map());
    privateSet.register("ta-cpu", Add, () => 1);
    privateSet.provide("ta-cpu", new Map());
    try {
      const report = threadAudit();
      expect(report.problems.filter((p) => p.kind === "missing").map((p) => [p.backend, p.op])).toEqual([["ta-cpu", "Add"]]);
      expect(report.registrations.map((r) => r.backend)).toContain("ta-cpu [backends:audit-test]");
    } finally {
      framework.dispose();
      privateSet.dispose();
    }
  });
});
