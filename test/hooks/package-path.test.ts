import { describe, expect, it } from "vitest";
import { isPackageName, isRecord, packagePath } from "../../src/hooks/package-path.js";

describe("package paths", () => {
  it("normalise paths inside the package and refuse the rest with a reason", () => {
    expect(packagePath("./dispatch/numba.js")).toEqual({ ok: true, path: "dispatch/numba.js" });
    expect(packagePath("a/../b.js")).toEqual({ ok: true, path: "b.js" });
    expect(packagePath("../x.js")).toEqual({ ok: false, reason: "leaves the package; it must point inside it" });
    expect(packagePath("/etc/passwd")).toMatchObject({ ok: false, reason: expect.stringContaining("is absolute") });
    expect(packagePath("C:\\\\x.js")).toMatchObject({ ok: false });
    expect(packagePath("file:///x.js")).toMatchObject({ ok: false });
    expect(packagePath("a\0b")).toEqual({ ok: false, reason: "contains a NUL character" });
    expect(packagePath("")).toEqual({ ok: false, reason: "is empty" });
  });

  it("tell package names and plain objects", () => {
    expect([isPackageName("ml-ops"), isPackageName("@scope/pkg"), isPackageName("../x"), isPackageName("a b")]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect([isRecord({}), isRecord([]), isRecord(null), isRecord("x")]).toEqual([true, false, false, false]);
  });
});
