import { describe, expect, it } from "vitest";
import type { AuditReport } from "../../src/registry/audit-events.js";
import { formatReport, shortModule, verdict } from "../../src/registry/audit-format.js";

const empty: AuditReport = {
  ok: true,
  checked: 0,
  registrations: [],
  outside: [],
  plugins: [],
  backends: [],
  problems: [],
  notes: ["no registrations were made"],
};
const record = {
  id: 0,
  backend: "cpu",
  op: "Conv",
  state: "applied" as const,
  site: "a.js:3",
  origin: undefined,
  tables: [{ table: 0, module: "file:///fw/cpu.js", outcome: "applied" as const, mechanism: "hook" as const }],
  error: undefined,
};

describe("formatReport", () => {
  it("says ok only when something was checked and nothing is wrong", () => {
    expect(verdict(empty)).toBe("nothing was checked: no registrations were made");
    // Checked, with no registration (an expectation, an entry a plugin wrote directly): nothing to say "landed" of.
    expect(verdict({ ...empty, checked: 1 })).toBe("ok: every entry checked is in its table");
    expect(verdict({ ...empty, checked: 1, registrations: [record] })).toBe("ok: every registration landed");
    const problem = { kind: "pending" as const, backend: "cpu", op: "Conv", id: 0, message: "waiting" };
    expect(verdict({ ...empty, ok: false, checked: 1, problems: [problem] })).toBe("1 problem(s):");
    expect(formatReport({ ...empty, ok: false, problems: [problem] })).toContain("  [pending] waiting");
    expect(formatReport({ ...empty, checked: 1 }, { verdict: "the program crashed" })).not.toContain("ok:");
    // Registrations made and all undone (a test's, restored after it): not "no registrations were made" under their rows.
    const undone = { ...empty, notes: [], registrations: [{ ...record, state: "disposed" as const }] };
    expect(verdict(undone)).toBe(
      "nothing was checked: every registration made was undone (disposed) before the audit, so none could be checked",
    );
  });

  it("never says every registration landed over one still waiting for a backend that never loaded", () => {
    const waiting = { ...record, id: 1, backend: "jax", state: "pending" as const, tables: [] };
    // A registration waiting for a backend that never loaded is not counted as checked (buildReport).
    expect(verdict({ ...empty, checked: 0, registrations: [waiting] })).toBe(
      "nothing was checked: no registration landed; 1 waits for jax, which never loaded",
    );
    expect(verdict({ ...empty, checked: 1, registrations: [record, waiting, { ...waiting, id: 2, backend: "gpu" }] })).toBe(
      "ok: every registration on a backend that loaded landed; 2 wait for gpu, jax, which never loaded",
    );
  });

  it("aligns one row per registration and per outside write, with a registry column only when there are several", () => {
    const text = formatReport({
      ...empty,
      checked: 2,
      registrations: [record],
      outside: [
        { backend: "cpu", op: "Pool", plugin: "kit-ops", module: "file:///kit/cpu.js", table: "file:///fw/cpu.js", replaced: false },
      ],
      notes: ["backends: cpu loaded (1 table)"],
    });
    const lines = text.split("\n");
    expect(lines[0]).toMatch(/^id\s+backend\s+op\s+state\s+via\s+site\s+module$/);
    expect(lines[1]).toMatch(/^0\s+cpu\s+Conv\s+applied\s+hook\s+a\.js:3\s+\/fw\/cpu\.js$/);
    expect(lines[2]).toMatch(
      /^-\s+cpu\s+Pool\s+applied\s+outside\s+added by \/kit\/cpu\.js, outside the registry \(kit-ops\)\s+\/fw\/cpu\.js$/,
    );
    expect(lines.at(-2)).toBe("· backends: cpu loaded (1 table)");
    expect(lines.at(-1)).toBe("ok: every registration landed");
    const several = formatReport({ ...empty, checked: 1, registrations: [{ ...record, registry: "#2" }] });
    expect(several.split("\n")[0]).toMatch(/^id\s+registry\s+backend/);
  });

  it("shows module URLs as paths, relative when shorter", () => {
    expect(shortModule("file:///work/app/x.js?copy=2", "/work/app")).toBe("x.js?copy=2");
    expect(shortModule("file:///usr/lib/x.js", "/work/app/deep/er")).toBe("/usr/lib/x.js");
    expect(shortModule("node:fs")).toBe("node:fs");
  });

  it("names the instances of one module (?v=1 … ?v=N) once, with their count, so that a row stays one line", () => {
    const tables = Array.from({ length: 300 }, (_, i) => ({
      table: i,
      module: `file:///fw/cpu.js?v=${i}`,
      outcome: "applied" as const,
      mechanism: "hook" as const,
    }));
    const one = { ...record, tables: [{ ...record.tables[0], module: "file:///fw/gpu.js?v=7" }, ...tables] };
    const text = formatReport({ ...empty, checked: 1, notes: [], registrations: [one as never] });
    const row = text.split("\n")[1] as string;
    expect(row).toMatch(/gpu\.js\?v=7, .*cpu\.js \(300 instances\)$/);
    expect(row.length).toBeLessThan(200);
  });
});
