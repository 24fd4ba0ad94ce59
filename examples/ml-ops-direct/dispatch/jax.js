// Runs right after tensorlab's jax dispatch module, and writes into its table directly.
import { jaxFuncify } from "tensorlab/link/jax/dispatch/basic.js";
import { AvgPool, kernel } from "../index.js";

jaxFuncify.register(AvgPool, kernel);
