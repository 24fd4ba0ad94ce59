// The jax backend's dispatch table: created when this module is evaluated, and not before.
import { createTable } from "../../builtin.js";

export const jaxFuncify = createTable("jax");
