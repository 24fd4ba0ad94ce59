import { describe, expect, it } from "vitest";
import { captureCallSite, formatCallSite } from "../../src/registry/call-site.js";
import { Registration } from "../../src/registry/registration.js";
import { RequestedEvent } from "../../src/registry/registration-events.js";
import { createRegistry } from "../../src/registry/registry.js";

class PoolLayer {}
const make = (id: number, backend: string, onDispose: (r: Registration) => void = () => {}) =>
  new Registration(id, backend, PoolLayer, "PoolLayer", () => 0, false, onDispose);

const impl = (name: string) => Object.defineProperty(() => name, "name", { value: name });

describe("RequestedEvent", () => {
  function callerOfRegister() {
    return captureCallSite(callerOfRegister);
  }

  it("formats its call site once, when first read, and serialises with it", () => {
    const registration = make(7, "jax");
    registration.requested.callSite = callerOfRegister();
    const event = registration.requested;
    expect(event).toBeInstanceOf(RequestedEvent);
    expect(event).toMatchObject({ kind: "requested", id: 7, backend: "jax", op: "PoolLayer", seq: 0 });
    const site = event.site;
    expect(site).toMatch(/^test\/registering\/where-each-registration-was-made\.test\.ts:\d+$/);
    expect(event.site).toBe(site);
    expect(JSON.parse(JSON.stringify(event))).toEqual({ kind: "requested", seq: 0, id: 7, backend: "jax", op: "PoolLayer", site });
    expect(make(8, "jax").requested.site).toBe("unknown");
  });
});

function registerLike() {
  return captureCallSite(registerLike);
}

describe("call sites", () => {
  it("points at the caller of the named function, relative to the working directory", () => {
    const site = registerLike();
    expect(formatCallSite(site)).toMatch(/^test\/registering\/where-each-registration-was-made\.test\.ts:\d+$/);
  });

  it("formats frames of every shape", () => {
    expect(formatCallSite(undefined)).toBe("unknown");
    expect(formatCallSite({})).toBe("unknown");
    expect(formatCallSite({ stack: "Error\n    at /abs/outside/file.js:3:9" })).toBe("/abs/outside/file.js:3");
    expect(formatCallSite({ stack: "Error\n    at fn (node:internal/x:3:9)" })).toBe("node:internal/x:3");
    expect(formatCallSite({ stack: "Error\n    at fn (file:///%zz:3:9)" })).toBe("file:///%zz:3");
    expect(formatCallSite({ stack: "Error\n    at <anonymous>" })).toBe("<anonymous>");
    expect(formatCallSite({ stack: `Error\n    at fn (${process.cwd()}/a.js:7:1)` })).toBe("a.js:7");
  });

  it("records where each registration was made while an audit runs, or when asked to; 'unknown' otherwise", () => {
    const on = createRegistry({ callSites: true });
    on.register("numba", PoolLayer, impl("pool"));
    expect(on.verify().registrations[0]?.site).toMatch(/^test\/registering\/where-each-registration-was-made\.test\.ts:\d+$/);
    const off = createRegistry({ callSites: false });
    off.register("numba", PoolLayer, impl("pool"));
    expect(off.verify().registrations[0]?.site).toBe("unknown");
    const saved = { audit: process.env.DISPATCH_HOOK_AUDIT, file: process.env.DISPATCH_HOOK_AUDIT_DIR };
    try {
      delete process.env.DISPATCH_HOOK_AUDIT;
      delete process.env.DISPATCH_HOOK_AUDIT_DIR;
      const quiet = createRegistry();
      quiet.register("numba", PoolLayer, impl("pool"));
      expect(quiet.verify().registrations[0]?.site).toBe("unknown");
      process.env.DISPATCH_HOOK_AUDIT = "report";
      const audited = createRegistry();
      audited.register("numba", PoolLayer, impl("pool"));
      expect(audited.verify().registrations[0]?.site).toMatch(/^test\/registering\/where-each-registration-was-made\.test\.ts:\d+$/);
    } finally {
      for (const [key, value] of [
        ["DISPATCH_HOOK_AUDIT", saved.audit],
        ["DISPATCH_HOOK_AUDIT_DIR", saved.file],
      ] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });
});
