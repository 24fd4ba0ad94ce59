import { describe, expect, it } from "vitest";
import { inlineFields } from "../../src/hooks/declarations.js";

describe("inlineFields", () => {
  it("turns code declarations into the fields discovery reads, a plugin's directory and name kept", () => {
    const backends = { cpu: { module: "./cpu.js", export: "cpuTable" } };
    expect(
      inlineFields(
        { backends, plugins: [{ name: "mine", root: "/p", registrations: { cpu: "./reg.js" } }, { expects: { cpu: ["Conv"] } }] },
        "x",
      ),
    ).toEqual([
      { field: { backends } },
      { field: { registrations: { cpu: "./reg.js" } }, dir: "/p", name: "mine" },
      { field: { expects: { cpu: ["Conv"] } } },
    ]);
    expect(inlineFields({}, "x")).toEqual([]);
  });

  it("refuses an unknown plugin key, naming the caller and the entry", () => {
    expect(() => inlineFields({ plugins: [{}, { registration: {} } as never] }, "dispatch-hook/vite options")).toThrow(
      expect.objectContaining({
        code: "ERR_DISPATCH_INVALID_OPTION",
        message: expect.stringContaining("dispatch-hook/vite options: plugins[1]"),
      }),
    );
  });
});
