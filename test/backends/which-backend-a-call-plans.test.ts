import { describe, expect, it } from "vitest";
import type { Implementation } from "../../src/dispatchable/impl-table.js";
import { NamedTypeResolver } from "../../src/dispatchable/named-type.js";
import { type PlanBackend, plan } from "../../src/dispatchable/plan.js";
import { TypeSet, typeOf } from "../../src/dispatchable/type-match.js";

class Op {}
class JaxArray {}
class CupyArray {}
const impl: Implementation = () => 1;
const resolver = new NamedTypeResolver(process.cwd());
const backend = (
  name: string,
  primary: Function[],
  secondary: Function[] = [],
  options: { optIn?: boolean; implements?: boolean } = {},
): PlanBackend => ({
  name,
  types: new TypeSet(primary, secondary, resolver, name),
  requiresOptIn: options.optIn === true,
  implementation: () => (options.implements === false ? undefined : impl),
});
const decide = (values: unknown[], order: PlanBackend[], blocked = new Map<string, string>(), optedIn = new Set<string>()) =>
  plan(
    "add",
    Op,
    values.map((_, i) => `argument ${i}`),
    values,
    values.map(typeOf),
    { order, blocked, optedIn },
  );

describe("plan", () => {
  const jax = backend("jax", [JaxArray], [Number]);
  const cupy = backend("cupy", [CupyArray], [], { optIn: true });
  it("takes a backend when every type is one of its types and one is primary", () => {
    expect(decide([new JaxArray(), 2], [jax, cupy]).candidates.map((c) => c.backend)).toEqual(["jax"]);
    // Only secondary types: not jax's call.
    const numbers = decide([1, 2], [jax, cupy]);
    expect(numbers.candidates).toEqual([]);
    expect(numbers.error).toBeUndefined();
    expect(numbers.skipped.find((s) => s.backend === "jax")?.reason).toBe(
      "none of the arguments is one of its primary types (Number: secondary)",
    );
  });

  it("passes over blocked, opt-in and unimplementing backends, saying why", () => {
    const p = decide(
      [new CupyArray()],
      [jax, cupy, backend("lazy", [CupyArray], [], { implements: false })],
      new Map([["jax", "blocked by NUM_BLOCK"]]),
    );
    expect(p.skipped).toEqual([
      { backend: "jax", reason: "blocked by NUM_BLOCK" },
      { backend: "cupy", reason: "requires opt-in: prioritize it to use it" },
      { backend: "lazy", reason: "has no implementation of add" },
    ]);
    expect(decide([new CupyArray()], [jax, cupy], new Map(), new Set(["cupy"])).candidates.map((c) => c.backend)).toEqual(["cupy"]);
  });

  it("fails fast on inputs that belong to different backends, naming each type and each backend considered", () => {
    const p = decide([new JaxArray(), new CupyArray()], [jax, cupy], new Map(), new Set(["cupy"]));
    expect(p.error?.code).toBe("ERR_DISPATCH_MIXED_INPUTS");
    expect(p.error?.message).toContain("argument 0 is JaxArray (a type of jax); argument 1 is CupyArray (a type of cupy)");
    expect(p.error?.message).toContain("jax: does not accept CupyArray (argument 1)");
    expect(p.error?.message).toContain("cupy: does not accept JaxArray (argument 0)");
    expect(p.error?.message).toContain("never converted silently");
  });
});
