import { describe, expect, it } from "vitest";
import type { TableNotice } from "../../src/channel.js";
import { acceptNotice } from "../../src/registry/notice-intake.js";

describe("acceptNotice", () => {
  const intake = () => {
    const provided: unknown[][] = [];
    const recorded: unknown[] = [];
    return {
      provided,
      recorded,
      intake: {
        withdrawn: new WeakSet<object>(),
        provide: (...args: unknown[]) => provided.push(args),
        record: (event: unknown) => recorded.push(event),
      },
    };
  };

  it("provides an announced table with its module and mechanism, but not one withdrawn with its handle", () => {
    const { provided, intake: i } = intake();
    const table = new Map();
    const notice: TableNotice = {
      via: "hook",
      backend: "numba",
      module: "file:///n.js",
      namespace: { numbaTable: table },
      exportName: "numbaTable",
    };
    acceptNotice(notice, i);
    expect(provided).toEqual([["numba", table, { via: "hook", module: "file:///n.js" }]]);
    i.withdrawn.add(table);
    acceptNotice(notice, i);
    expect(provided).toHaveLength(1);
  });

  it("records, never throws, an announcement whose export is not a usable table", () => {
    const { recorded, intake: i } = intake();
    const failing = {
      ...i,
      provide: () => {
        throw new Error("no shape");
      },
    };
    acceptNotice(
      { via: "hook", backend: "numba", module: "file:///n.js", namespace: { numbaTable: 3 }, exportName: "numbaTable" },
      failing,
    );
    expect(recorded).toEqual([
      expect.objectContaining({
        kind: "rejected",
        backend: "numba",
        message: expect.stringContaining('its export "numbaTable" could not be used: no shape'),
      }),
    ]);
  });
});
