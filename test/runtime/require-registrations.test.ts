import { describe, expect, it } from "vitest";
import { hub } from "../../src/hub.js";
import { requireRegistrations } from "../../src/runtime/require-registrations.js";

const facts = () => hub().windows();
const module = { url: "file:///rr/table.cjs", backend: "cpu", exportName: "cpuTable", format: "commonjs" as const };
const window = (name: string) => ({ id: `rr ${name}`, url: module.url, backend: "cpu", plugin: name, module: `file:///rr/${name}.cjs` });

describe("requireRegistrations", () => {
  it("loads each in order, each in its window; a missing one and a throwing one are recorded, and the rest still run", () => {
    const loaded: string[] = [];
    const exports = { cpuTable: new Map() };
    requireRegistrations(
      module,
      exports,
      (id) => {
        loaded.push(id);
        if (id === "/rr/throws.cjs") throw new Error("broken plugin");
        return {};
      },
      [
        { window: window("first"), path: "/rr/first.cjs" },
        { window: window("gone"), path: "/rr/gone.cjs", missing: "Cannot find /rr/gone.cjs" },
        { window: window("throws"), path: "/rr/throws.cjs" },
        { window: window("last"), path: "/rr/last.cjs" },
      ],
    );
    expect(loaded).toEqual(["/rr/first.cjs", "/rr/throws.cjs", "/rr/last.cjs"]);
    const states = Object.fromEntries(
      facts()
        .filter((w) => w.info.id.startsWith("rr "))
        .map((w) => [w.info.plugin, w.state]),
    );
    expect(states).toEqual({ first: "done", gone: "missing", throws: "failed", last: "done" });
  });
});
