/**
 * What loader.mjs loads at the start of every process: install() alone. The exit audit and the rest
 * of the hooks API are separate bundles, loaded only when asked for.
 */
export { install } from "./install.js";
