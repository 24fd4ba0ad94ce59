import { describe, expect, it } from "vitest";
import { ask, channels, type TableProvidedMessage, type TableQueryMessage } from "../src/channel.js";
import { provide } from "../src/provide.js";
import { Dispatcher } from "../src/registry/dispatcher.js";
import { createRegistry } from "../src/registry/registry.js";
import { thrown } from "./helpers.js";

class Op {}

describe("provide (the framework-native route)", () => {
  it("reaches registries waiting now and registries created later", () => {
    const waiting = createRegistry();
    waiting.register("native-a", Op, () => "now");
    const table = new Dispatcher({ backend: "native-a" });
    const seen: TableProvidedMessage[] = [];
    const listener = (m: unknown) => seen.push(m as TableProvidedMessage);
    channels.tableProvided.subscribe(listener);
    provide("native-a", table, { module: "file:///fw/native.js" });
    channels.tableProvided.unsubscribe(listener);
    expect(table.resolve(new Op())()).toBe("now");
    expect(seen).toEqual([{ version: 1, backend: "native-a", table, module: "file:///fw/native.js", realm: globalThis }]);
    waiting.dispose();
    const later = createRegistry();
    const second = new Dispatcher({ backend: "native-a" });
    later.register("native-a", class Late {}, () => "later");
    expect(later.verify().registrations[0]?.state).toBe("applied");
    expect(
      ask<TableQueryMessage>(channels.tableQuery, { version: 1, answers: [] }).answers.some((n) => n.via === "native" && n.table === table),
    ).toBe(true);
    void second;
    later.dispose();
  });

  it("refuses bad input with a code and announces nothing", () => {
    const before = ask<TableQueryMessage>(channels.tableQuery, { version: 1, answers: [] }).answers.length;
    expect(thrown(() => provide("", {})).code).toBe("ERR_DISPATCH_INVALID_BACKEND");
    expect(thrown(() => provide("my backend", {})).code).toBe("ERR_DISPATCH_INVALID_BACKEND");
    expect(thrown(() => provide("x", null as never)).code).toBe("ERR_DISPATCH_TABLE_SHAPE");
    expect(thrown(() => provide("x", {}, { modul: "y" } as never)).message).toContain('did you mean "module"');
    expect(ask<TableQueryMessage>(channels.tableQuery, { version: 1, answers: [] }).answers.length).toBe(before);
  });
});
