import { describe, expect, it } from "vitest";
import { ask, channels, type TableQueryMessage } from "../../src/channel.js";
import { announce } from "../../src/runtime/table-notice.js";

const query = () => ask<TableQueryMessage>(channels.tableQuery, { version: 1, answers: [] }).answers;

describe("announce", () => {
  it("makes a table answer every later table query, once however often it is announced", () => {
    const table = new Map();
    const before = query().length;
    announce({ via: "native", backend: "cpu", module: undefined, table });
    announce({ via: "native", backend: "cpu", module: undefined, table });
    const namespace = { cpuTable: new Map() };
    announce({ via: "hook", backend: "cpu", module: "file:///cpu.js", namespace, exportName: "cpuTable" });
    announce({ via: "hook", backend: "cpu", module: "file:///cpu.js", namespace, exportName: "cpuTable" });
    const answers = query();
    expect(answers.length - before).toBe(2);
    expect(answers.some((n) => n.via === "native" && n.table === table)).toBe(true);
    expect(answers.some((n) => n.via === "hook" && n.module === "file:///cpu.js")).toBe(true);
  });
});
