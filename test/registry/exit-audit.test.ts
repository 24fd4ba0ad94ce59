import { afterEach, describe, expect, it } from "vitest";
import { auditVerdict, parseAuditMode } from "../../src/registry/exit-audit.js";
import { createRegistry, type Registry } from "../../src/registry/registry.js";
import { threadAudit } from "../../src/registry/thread-audit.js";

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
