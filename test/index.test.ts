import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

describe("the public API", () => {
  it("exports a small, fixed set of values", () => {
    expect(Object.keys(api).sort()).toEqual([
      "AuditLog",
      "DispatchHookError",
      "Dispatcher",
      "Registry",
      "backendOptions",
      "createBackends",
      "createRegistry",
      "dispatchable",
      "errorCodes",
      "formatReport",
      "isDispatcher",
      "provide",
      "referenceCheck",
      "register",
      "registry",
      "threadAudit",
      "warningCodes",
    ]);
  });

  it("register() is shorthand for the default registry and reports the plugin's own line", () => {
    class Shorthand {}
    const handle = api.register("numba", Shorthand, () => 1);
    try {
      expect(api.registry.pending("numba")).toContain(handle);
      const record = api.registry.verify().registrations.find((r) => r.id === handle.id);
      expect(record?.site).toMatch(/^test\/index\.test\.ts:\d+$/);
    } finally {
      handle.dispose();
    }
    expect(handle.state).toBe("disposed");
  });
});
