import { describe, expect, it } from "vitest";
import { register, registry } from "../../src/default-registry.js";

describe("the default registry", () => {
  it("register() is shorthand for it, and records no call site while no audit runs", () => {
    class Shorthand {}
    const handle = register("numba", Shorthand, () => 1);
    try {
      expect(registry.pending("numba")).toContain(handle);
      const record = registry.verify().registrations.find((r) => r.id === handle.id);
      // Capturing a call site costs more than the rest of a registration: only while an audit runs
      // (test/integration checks the plugin's own line under DISPATCH_HOOK_AUDIT).
      expect(record?.site).toBe("unknown");
    } finally {
      handle.dispose();
    }
    expect(handle.state).toBe("disposed");
  });

  it('is named "default" in the thread\'s audit', async () => {
    const { threadAudit } = await import("../../src/registry/thread-audit.js");
    class Named {}
    const handle = register("jax", Named, () => 1);
    expect(threadAudit().registrations.find((r) => r.op === "Named")?.registry).toBe("default");
    handle.dispose();
  });
});
