import { describe, expect, it } from "vitest";
import { ask, channelNames, channels, type LoaderStatusMessage, summarizeError } from "../src/channel.js";
import { DispatchHookError } from "../src/registry/errors.js";

describe("channels", () => {
  it("are named dispatch-hook:area:event, one name per channel", () => {
    const names = Object.values(channelNames);
    for (const name of names) expect(name).toMatch(/^dispatch-hook:[a-z]+:[a-z]+$/);
    expect(new Set(names).size).toBe(names.length);
    expect(Object.keys(channels).sort()).toEqual(Object.keys(channelNames).sort());
  });

  it("ask() returns the message as its subscribers filled it, and untouched when nobody answers", () => {
    const alone = ask<LoaderStatusMessage>(channels.loaderStatus, { version: 1, installations: [] });
    expect(alone.installations).toEqual([]);
    const answer = (message: unknown) => (message as LoaderStatusMessage).installations.push({ mode: "test", backends: ["numba"] });
    channels.loaderStatus.subscribe(answer);
    try {
      const answered = ask<LoaderStatusMessage>(channels.loaderStatus, { version: 1, installations: [] });
      expect(answered.installations).toEqual([{ mode: "test", backends: ["numba"] }]);
    } finally {
      channels.loaderStatus.unsubscribe(answer);
    }
  });
});

describe("summarizeError", () => {
  it("keeps name, message and code, and copes with non-errors", () => {
    expect(summarizeError(new DispatchHookError("ERR_DISPATCH_SEALED", "sealed"))).toEqual({
      name: "DispatchHookError [ERR_DISPATCH_SEALED]",
      message: "sealed",
      code: "ERR_DISPATCH_SEALED",
    });
    expect(summarizeError(Object.assign(new Error("x"), { code: 7 }))).toEqual({ name: "Error", message: "x", code: undefined });
    expect(summarizeError("plain")).toEqual({ name: "non-error", message: "plain", code: undefined });
  });
});
