// Runs right after tensorlab's numba dispatch module, and writes into its table directly.
import { numbaFuncify } from "tensorlab/link/numba/dispatch/basic.js";
import { AvgPool, kernel } from "../index.js";

numbaFuncify.register(AvgPool, kernel);
