import diagnosticsChannel from "node:diagnostics_channel";
import { describe, expect, it } from "vitest";
import { channelNames, channels } from "../../src/hooks/channel.js";

describe("channels", () => {
  it("are named dispatch-hook:area:event and are the process-wide channels of those names", () => {
    for (const [key, name] of Object.entries(channelNames)) {
      expect(name).toMatch(/^dispatch-hook:[a-z]+:[a-z]+$/);
      // Another copy of the package that asks for the same name gets the same channel.
      expect(diagnosticsChannel.channel(name)).toBe(channels[key as keyof typeof channels]);
    }
  });

  it("publish synchronously to subscribers", () => {
    const seen: unknown[] = [];
    const listener = (message: unknown) => seen.push(message);
    diagnosticsChannel.subscribe(channelNames.loaderStatus, listener);
    channels.loaderStatus.publish({ version: 1, installations: [] });
    diagnosticsChannel.unsubscribe(channelNames.loaderStatus, listener);
    expect(seen).toEqual([{ version: 1, installations: [] }]);
  });
});
