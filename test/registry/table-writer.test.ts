import { describe, expect, it } from "vitest";
import type { AuditEvent } from "../../src/registry/audit-events.js";
import { Registration } from "../../src/registry/registration.js";
import { adapterFor } from "../../src/registry/table-adapter.js";
import { TableWriter } from "../../src/registry/table-writer.js";
import { byNameAdapter } from "../helpers.js";

class Pool {}

function writer() {
  const events: Array<Partial<AuditEvent>> = [];
  let listening = false;
  const w = new TableWriter({
    record: (event) => events.push(event as Partial<AuditEvent>),
    setState: (registration, next) => {
      registration.state = next;
    },
    listen: () => {
      listening = true;
    },
    stopListening: () => {
      listening = false;
    },
  });
  const backend = (name: string) => w.backend(name);
  let next = 0;
  const registration = (impl: () => unknown, override = false) => new Registration(next++, "numba", Pool, "Pool", impl, override, () => {});
  return { w, events, backend, registration, listening: () => listening };
}

describe("TableWriter", () => {
  it("applies an owner to every table of its backend, and puts back what the table held when it is disposed", () => {
    const { w, events, backend, registration, listening } = writer();
    const table = new Map();
    w.attach(backend("numba"), 0, table, adapterFor(table, "numba", undefined), { module: "file:///numba.js", via: "hook" });
    const mine = () => "mine";
    const r = registration(mine);
    w.activate(r, "immediate");
    expect(listening()).toBe(true);
    expect(table.get(Pool)).toBe(mine);
    expect(r.state).toBe("applied");
    w.dispose(r, "handle");
    expect(table.has(Pool)).toBe(false);
    expect(listening()).toBe(false);
    expect(events.map((e) => e.kind)).toEqual(["provided", "applied", "disposed"]);
  });

  it("refuses to replace an entry it did not write, unless overridden; a withdrawn table gets its entry back out", () => {
    const { w, events, backend, registration } = writer();
    const framework = () => "framework's";
    const table = new Map([[Pool, framework]]);
    const handle = w.attach(backend("numba"), 0, table, adapterFor(table, "numba", undefined), undefined);
    const polite = registration(() => "plugin's");
    w.activate(polite, "immediate");
    expect(polite.state).toBe("refused");
    expect(table.get(Pool)).toBe(framework);
    w.dispose(polite, "handle");
    const forced = registration(() => "forced", true);
    w.activate(forced, "immediate");
    expect(table.get(Pool)).toBe(forced.impl);
    expect(w.wrote(table, Pool, forced.impl)).toBe(true);
    handle.dispose();
    // Withdrawn: the framework's own entry is back, and the registration waits for another table.
    expect(table.get(Pool)).toBe(framework);
    expect(forced.state).toBe("pending");
    expect(events.at(-1)?.kind).toBe("withdrawn");
  });

  it("says it wrote an entry of a table keyed by op name (an adapter that writes under the class's name), and no other", () => {
    const { w, backend, registration } = writer();
    const table = new Map<string, unknown>();
    w.attach(backend("numba"), 0, table, adapterFor(table, "numba", byNameAdapter), undefined);
    const mine = registration(() => "mine");
    w.activate(mine, "immediate");
    expect(table.get("Pool")).toBe(mine.impl);
    const ask = (opType: Function | string, impl: unknown) => w.wrote(table, opType, impl);
    expect(ask("Pool", mine.impl)).toBe(true);
    expect(ask("Pool", () => "someone else's")).toBe(false);
    expect(ask("Conv", mine.impl)).toBe(false);
  });
});
