import { describe, expect, it } from "vitest";
import { BackendState, Registration, type Table } from "../../src/registry/registration.js";

class A {}
class B {}
const table = (id: number) => ({ id }) as unknown as Table;
const registration = (id: number, type: new () => unknown = A) =>
  new Registration(
    id,
    "cpu",
    type,
    type.name,
    () => id,
    false,
    () => {},
  );

describe("BackendState", () => {
  it("applies each queued (registration, table) pair once, in order, and only for owners and known tables", () => {
    const state = new BackendState("cpu");
    const [t0, t1, gone] = [table(0), table(1), table(2)];
    state.tables.push(t0, t1);
    const a = registration(0);
    const b = registration(1, B);
    state.owners.set(A, a);
    state.owners.set(B, b);
    state.enqueueEverywhere(a, "native");
    state.enqueue(b, t1, "hook");
    state.enqueue(b, gone, "hook");
    state.enqueue(registration(9), t0, "hook");
    const applied: string[] = [];
    state.drain((r, t) => {
      applied.push(`${r.id}@${t.id}`);
      r.addTable(t);
      // A registration made while draining is applied after the current one, once.
      if (r === a && t === t0) state.enqueue(b, t0, "immediate");
    });
    expect(applied).toEqual(["0@0", "0@1", "1@1", "1@0"]);
    state.drain(() => applied.push("again"));
    expect(applied).not.toContain("again");
  });

  it("keeps a line behind each owner: the newest waiting comes back first", () => {
    const state = new BackendState("cpu");
    const [first, second, restored] = [registration(1), registration(2), registration(3)];
    state.wait(first);
    state.wait(second);
    state.wait(restored, true);
    state.unwait(second);
    expect(state.heir(A)).toBe(first);
    expect(state.heir(A)).toBe(restored);
    expect(state.heir(A)).toBeUndefined();
  });

  it("lists live registrations oldest first, whatever order they came back in", () => {
    const state = new BackendState("cpu");
    const late = registration(5, B);
    const early = registration(2);
    state.owners.set(B, late);
    state.owners.set(A, early);
    expect(state.live().map((r) => r.id)).toEqual([2, 5]);
  });
});
