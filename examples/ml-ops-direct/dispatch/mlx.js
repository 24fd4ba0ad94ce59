// Runs right after tensorlab's mlx dispatch module, and writes into its table directly.
import { mlxFuncify } from "tensorlab/link/mlx/dispatch/basic.js";
import { AvgPool, kernel } from "../index.js";

mlxFuncify.register(AvgPool, kernel);
