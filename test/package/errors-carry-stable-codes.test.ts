import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createBackends } from "../../src/dispatchable/backend-set.js";
import { DispatchHookError, describe as describeValue, errorCodes, warningCodes } from "../../src/registry/errors.js";
import { backendNameProblem } from "../../src/registry/options.js";

const src = fileURLToPath(new URL("../../src", import.meta.url));
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
const code = sources(src)
  .filter((f) => !f.endsWith("errors.ts"))
  .map((f) => readFileSync(f, "utf8"))
  .join("\n");

describe("DispatchHookError", () => {
  it("carries a stable code, details and cause", () => {
    const cause = new Error("root");
    const error = new DispatchHookError("ERR_DISPATCH_SEALED", "sealed", { cause, details: { backend: "numba" } });
    expect(error.code).toBe("ERR_DISPATCH_SEALED");
    expect(error.name).toBe("DispatchHookError [ERR_DISPATCH_SEALED]");
    expect(error.cause).toBe(cause);
    expect(error.details).toEqual({ backend: "numba" });
    expect(Object.keys(error)).not.toContain("details");
    expect(new DispatchHookError("ERR_DISPATCH_CONFLICT", "x").details).toEqual({});
    expect(String(error)).toBe("DispatchHookError [ERR_DISPATCH_SEALED]: sealed");
  });
});

describe("the table of codes", () => {
  it("holds every code the source uses, errors and warnings alike", () => {
    const used = new Set([...code.matchAll(/\b((?:ERR_DISPATCH|DISPATCH_HOOK)_[A-Z_]+)\b/g)].map((m) => m[1] as string));
    const known = new Set([...Object.keys(errorCodes), ...Object.keys(warningCodes)]);
    // Names of environment variables share the prefix; they are not codes.
    const env = new Set(["DISPATCH_HOOK_AUDIT", "DISPATCH_HOOK_LOADER_CWD", "DISPATCH_HOOK_AUDIT_DIR", "DISPATCH_HOOK_CONFIG"]);
    expect([...used].filter((c) => !known.has(c) && !env.has(c))).toEqual([]);
  });

  it("lists every code once in docs/errors.md, with what to do about it", () => {
    const doc = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");
    const rows = new Map(
      [...doc.matchAll(/^\| `((?:ERR_DISPATCH|DISPATCH_HOOK)_[A-Z_]+)` \| ([^|]+) \| ([^|]+) \|$/gm)].map((m) => [m[1], m[3]?.trim()]),
    );
    const codes = [...Object.keys(errorCodes), ...Object.keys(warningCodes)];
    expect(codes.filter((c) => !rows.has(c))).toEqual([]);
    expect([...rows.keys()].filter((c) => !codes.includes(c as string))).toEqual([]);
    expect([...rows.values()].every((fix) => (fix ?? "").length > 10)).toBe(true);
  });

  it("lists as reserved exactly the backend names the rule refuses", () => {
    const doc = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");
    const row = /^\| `ERR_DISPATCH_RESERVED_NAME` \|.*$/m.exec(doc)?.[0] ?? "";
    const named = [...row.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string).filter((n) => n !== "ERR_DISPATCH_RESERVED_NAME");
    expect(named.length).toBeGreaterThan(0);
    // "default" is refused by a backend set only: there it names the reference implementation.
    expect(named.filter((n) => n !== "default" && backendNameProblem(n)?.code !== "ERR_DISPATCH_RESERVED_NAME")).toEqual([]);
    expect(named).toContain("default");
    const set = createBackends({ name: "reserved", discover: false });
    expect(() => set.declare({ name: "default" })).toThrow(expect.objectContaining({ code: "ERR_DISPATCH_RESERVED_NAME" }));
    expect(row).not.toContain("…");
  });

  it("has no code that nothing uses", () => {
    const unused = [...Object.keys(errorCodes), ...Object.keys(warningCodes)].filter((c) => !code.includes(c));
    expect(unused).toEqual([]);
  });

  it("throws nothing without a code: every `throw new` in src is a DispatchHookError", () => {
    const bare = [...code.matchAll(/throw new (\w+)\(/g)].map((m) => m[1]).filter((name) => name !== "DispatchHookError");
    expect(bare).toEqual([]);
  });
});

describe("describe", () => {
  it("describes values briefly and safely", () => {
    expect(describeValue(function named() {})).toBe("function named");
    expect(describeValue(() => {})).toBe("anonymous function");
    expect(describeValue("s")).toBe('"s"');
    expect(describeValue(null)).toBe("null");
    expect(describeValue(undefined)).toBe("undefined");
    expect(describeValue([1])).toBe("an array");
    expect(describeValue(Object.create(null))).toBe("object with null prototype");
    expect(describeValue(new Map())).toBe("Map instance");
    expect(describeValue(Object.create(Object.create(null, { constructor: { value: 5 } })))).toBe("object");
    expect(describeValue(3)).toBe("number 3");
    // Never throws: a revoked proxy, or a prototype whose constructor getter throws.
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(describeValue(proxy)).toBe("an object that cannot be read (a revoked proxy?)");
    const trap = Object.create(
      Object.defineProperty({}, "constructor", {
        get: () => {
          throw new Error("no");
        },
      }),
    );
    expect(describeValue(trap)).toBe("object");
  });
});
