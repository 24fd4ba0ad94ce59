import { afterEach, describe, expect, it } from "vitest";
import { auditVerdict, parseAuditMode } from "../../src/registry/exit-audit.js";
import { createRegistry, type Registry } from "../../src/registry/registry.js";
import { threadAudit } from "../../src/registry/thread-audit.js";

class PoolLayer {}

describe("parseAuditMode", () => {
  it("reads the modes and the booleans, in any case", () => {
    for (const value of [undefined, "", "0", "false", "FALSE", "off", "Off", "no", "NO", " no "]) expect(parseAuditMode(value)).toBe("off");
    for (const value of ["1", "true", "True", "on", "ON", "yes", "Yes", "report", "REPORT"]) expect(parseAuditMode(value)).toBe("report");
    for (const value of ["strict", "Strict", "STRICT"]) expect(parseAuditMode(value)).toBe("strict");
  });

  it("warns with a code that names the variable and the values it accepts, and keeps the default (off)", async () => {
    const warnings: Error[] = [];
    const listener = (warning: Error) => warnings.push(warning);
    process.on("warning", listener);
    expect(parseAuditMode("stirct")).toBe("off");
    expect(parseAuditMode("enabled", false)).toBe("off");
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    process.off("warning", listener);
    expect(warnings.map((w) => (w as { code?: string }).code)).toEqual(["DISPATCH_HOOK_AUDIT_MODE"]);
    expect(warnings[0]?.message).toContain('DISPATCH_HOOK_AUDIT="stirct"');
    expect(warnings[0]?.message).toMatch(/"strict"; "report" \(or 1, true, on, yes\); "off" \(or 0, false, no, or empty\)/);
  });
});

describe("auditVerdict over the thread's audit", () => {
  const registries: Registry[] = [];
  const fresh = () => {
    const registry = createRegistry();
    registries.push(registry);
    return registry;
  };
  afterEach(() => {
    for (const registry of registries.splice(0)) registry.dispose();
  });

  it("is silent when off, and when strict finds nothing", () => {
    fresh().register("numba", PoolLayer, () => 0);
    expect(auditVerdict(threadAudit(), "off")).toEqual({ text: "", fail: false });
    expect(auditVerdict(threadAudit(), "strict")).toEqual({ text: "", fail: false });
  });

  it("prints the table in report mode without failing, and says when nothing was checked", () => {
    const nothing = auditVerdict(threadAudit(), "report");
    expect(nothing.text).toContain("nothing was checked: no registrations were made");
    expect(nothing.text).not.toContain("ok:");
    fresh().register("numba", PoolLayer, () => 0);
    const verdict = auditVerdict(threadAudit(), "report");
    expect(verdict.fail).toBe(false);
    expect(verdict.text).toContain("dispatch-hook audit (report)");
    expect(verdict.text).toContain("PoolLayer");
  });

  it("fails in strict mode on a failed registration in any registry, and prints why", () => {
    fresh().register("numba", PoolLayer, () => 0);
    const failing = fresh();
    failing.register("jax", PoolLayer, () => 0);
    failing.provide("jax", {
      register() {
        throw new Error("table refused");
      },
    });
    const verdict = auditVerdict(threadAudit(), "strict");
    expect(verdict.fail).toBe(true);
    expect(verdict.text).toContain("table refused");
  });
});
