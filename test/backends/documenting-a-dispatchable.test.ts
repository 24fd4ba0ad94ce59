import { describe, expect, it } from "vitest";
import { formatDocs } from "../../src/dispatchable/docs.js";

describe("formatDocs", () => {
  it("lists, per function, the backends that implement it in order, with their types, then the default", () => {
    const text = formatDocs(
      "numlike",
      [
        { name: "add", relevant: "x, y", reference: "add" },
        { name: "fft", relevant: "x", reference: "fft" },
      ],
      [
        {
          name: "jax",
          primaryTypes: ["JaxLike (protocol)"],
          secondaryTypes: ["Number"],
          requiresOptIn: false,
          functions: { add: "jaxAdd" },
          declaredIn: "code",
        },
        {
          name: "cupy",
          primaryTypes: ["CupyArray"],
          secondaryTypes: [],
          requiresOptIn: true,
          functions: { add: "cupy/add.js#add" },
          declaredIn: "code",
        },
      ],
    );
    expect(text.split("\n")).toEqual([
      "add() [numlike]: dispatches on x, y",
      "  1. jax: jaxAdd; primary: JaxLike (protocol); secondary: Number",
      "  2. cupy (requires opt-in): cupy/add.js#add; primary: CupyArray",
      "  default: add (the reference implementation), when no backend accepts the arguments",
      "fft() [numlike]: dispatches on x",
      "  no backend implements it",
      "  default: fft (the reference implementation), when no backend accepts the arguments",
    ]);
  });

  it("says so when a function dispatches on no argument", () => {
    expect(formatDocs("n", [{ name: "arange", relevant: "", reference: "arange" }], [])).toContain(
      "arange() [n]: dispatches on no argument (explicit types only: like(), backendOptions({ types }))",
    );
  });
});
