// Scenario 3, dispatch-hook without the loader: the app registers through the explicit route but
// was started without --import dispatch-hook/loader.mjs. Compiling fails, and says why.
import "ml-ops/register";
import { compile } from "tensorlab";
import { graph } from "./workload.js";

await compile(graph, { backend: "numba" });
