// pool(op, x), chosen per call by the type of x: a float32 Tensor goes to the typed-array kernel,
// anything else tensor-shaped to the reference implementation, which every backend is checked
// against. Other packages add backends in their package.json (see ../ml-ops-wasm), with no code here.
import { createBackends, dispatchable } from "dispatch-hook";
import { Tensor } from "tensorlab";
import * as kernels from "./kernels.js";
import * as reference from "./reference.js";

/** ml-ops's backends; ML_OPS_PRIORITIZE, ML_OPS_BLOCK and ML_OPS_SET_ORDER steer them. */
export const backends = createBackends({ name: "ml-ops", envPrefix: "ML_OPS" });

backends.declare({
  name: "typed-array",
  primaryTypes: [Tensor],
  implementations: { pool: kernels.pool, poolGrad: kernels.poolGrad },
});

/** Max pooling; dispatches on x. */
export const pool = dispatchable(reference.pool, { name: "pool", args: ["x"], backends });

/** The gradient of max pooling; dispatches on x and gy, which must belong to one backend. */
export const poolGrad = dispatchable(reference.poolGrad, { name: "poolGrad", args: ["x", "gy"], backends });
