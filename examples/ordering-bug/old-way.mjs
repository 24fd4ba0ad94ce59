// Scenario 1, the old way: a require() patch delivers ml-ops's registrations. It works until a test
// harness restores the loader, and then the next backend to load is missing the plugin's ops.
import { createRequire } from "node:module";
import { compile } from "tensorlab";
import { saveLoaderState } from "./harness.js";
import { graph, inputs, matchesReference } from "./workload.js";

const restoreLoaderState = saveLoaderState(); // the harness starts
createRequire(import.meta.url)("ml-ops/legacy-shim"); // the plugin's setup patches the loader

// test file 1
const numba = await compile(graph, { backend: "numba", moduleFormat: "cjs" });
console.log(`test file 1: compiled for numba; matches the reference: ${matchesReference(numba(inputs))}`);
restoreLoaderState(); // the harness, between test files. Nothing warns.

// test file 2
console.log("test file 2: compiling for jax …");
await compile(graph, { backend: "jax", moduleFormat: "cjs" });
