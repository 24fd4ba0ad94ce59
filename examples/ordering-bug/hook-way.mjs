// Scenario 2, dispatch-hook: run with `node --import dispatch-hook/loader.mjs`. ml-ops declares a
// registration module per backend; each loads exactly when its backend loads. The same harness
// step changes nothing.
import { registry } from "dispatch-hook";
import { backends, compile } from "tensorlab";
import { saveLoaderState } from "./harness.js";
import { graph, inputs, matchesReference } from "./workload.js";

const restoreLoaderState = saveLoaderState();
for (const [i, backend] of backends.entries()) {
  const run = await compile(graph, { backend });
  console.log(`test file ${i + 1}: compiled for ${backend}; matches the reference: ${matchesReference(run(inputs))}`);
  restoreLoaderState();
}
registry.assertComplete({ backends });
console.log(`\n${registry.format()}`);
