// Loaded by dispatch-hook exactly when tensorlab's numba backend loads (see package.json).
import { register } from "dispatch-hook";
import { implementations } from "../implementations.js";

for (const [type, impl] of implementations) register("numba", type, impl);
