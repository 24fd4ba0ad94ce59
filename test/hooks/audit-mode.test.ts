import { describe, expect, it } from "vitest";
import { auditVerdict, parseAuditMode } from "../../src/hooks/audit-mode.js";
import { createRegistry } from "../../src/registry/registry.js";

class PoolLayer {}

describe("parseAuditMode", () => {
  it("reads strict, report and off", () => {
    expect(parseAuditMode(undefined)).toBe("off");
    expect(parseAuditMode("")).toBe("off");
    expect(parseAuditMode("0")).toBe("off");
    expect(parseAuditMode("strict")).toBe("strict");
    expect(parseAuditMode("report")).toBe("report");
  });

  it("warns with a code on an unknown mode and reports", async () => {
    const warnings: Error[] = [];
    const listener = (warning: Error) => warnings.push(warning);
    process.on("warning", listener);
    expect(parseAuditMode("stirct")).toBe("report");
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    process.off("warning", listener);
    expect(warnings.map((w) => (w as { code?: string }).code)).toEqual(["DISPATCH_HOOK_AUDIT_MODE"]);
  });
});

describe("auditVerdict", () => {
  it("is silent when off or when strict finds nothing", () => {
    const registry = createRegistry();
    expect(auditVerdict(registry, "off")).toEqual({ text: "", fail: false });
    expect(auditVerdict(registry, "strict")).toEqual({ text: "", fail: false });
  });

  it("prints the table in report mode without failing", () => {
    const registry = createRegistry();
    registry.register("numba", PoolLayer, () => 0);
    const verdict = auditVerdict(registry, "report");
    expect(verdict.fail).toBe(false);
    expect(verdict.text).toContain("dispatch-hook audit (report)");
    expect(verdict.text).toContain("PoolLayer");
  });

  it("fails in strict mode on a failed registration and prints why", () => {
    const registry = createRegistry();
    registry.register("numba", PoolLayer, () => 0);
    registry.provide("numba", {
      register() {
        throw new Error("table refused");
      },
    });
    const verdict = auditVerdict(registry, "strict");
    expect(verdict.fail).toBe(true);
    expect(verdict.text).toContain("table refused");
  });
});
