import { describe, expect, it } from "vitest";
import * as api from "../../src/index.js";

describe("the public API", () => {
  it("exports a small, fixed set of values", () => {
    expect(Object.keys(api).sort()).toEqual([
      "DispatchHookError",
      "Dispatcher",
      "announce",
      "backendOptions",
      "createBackends",
      "createRegistry",
      "dispatchable",
      "errorCodes",
      "formatReport",
      "isDispatcher",
      "referenceCheck",
      "register",
      "registry",
      "threadAudit",
      "warningCodes",
    ]);
  });

  it("register() is shorthand for the default registry and records no call site while no audit runs", () => {
    class Shorthand {}
    const handle = api.register("numba", Shorthand, () => 1);
    try {
      expect(api.registry.pending("numba")).toContain(handle);
      const record = api.registry.verify().registrations.find((r) => r.id === handle.id);
      // Capturing a call site costs more than the rest of a registration: only while an audit runs
      // (test/integration checks the plugin's own line under DISPATCH_HOOK_AUDIT).
      expect(record?.site).toBe("unknown");
    } finally {
      handle.dispose();
    }
    expect(handle.state).toBe("disposed");
  });
});
