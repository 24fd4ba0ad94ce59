// Loaded by dispatch-hook exactly when tensorlab's pytorch backend loads (see package.json).
import { register } from "dispatch-hook";
import { implementations } from "../implementations.js";

for (const [type, impl] of implementations) register("pytorch", type, impl);
