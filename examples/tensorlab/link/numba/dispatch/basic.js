// The numba backend's dispatch table: created when this module is evaluated, and not before.
import { createTable } from "../../builtin.js";

export const numbaFuncify = createTable("numba");
