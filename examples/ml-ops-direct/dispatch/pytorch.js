// Runs right after tensorlab's pytorch dispatch module, and writes into its table directly.
import { pytorchFuncify } from "tensorlab/link/pytorch/dispatch/basic.js";
import { AvgPool, kernel } from "../index.js";

pytorchFuncify.register(AvgPool, kernel);
