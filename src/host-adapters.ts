/**
 * Host adapters that told the thread they serve it before any of their modules loaded: the Vite
 * plugin's setup file, and the Jest resolver, which runs in the worker that runs the tests. Shared by
 * every copy in the thread. @internal
 */
import { hostsKey } from "./channel.js";
import { hub } from "./hub.js";

export const hostAdapters = (): Set<string> => hub().shared(hostsKey, () => new Set<string>());
