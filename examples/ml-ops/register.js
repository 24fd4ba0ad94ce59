// The explicit route, for apps that do not use the loader's declarations: registers every op on
// every backend with dispatch-hook's default registry. Each lands when its backend's table exists.
import { register } from "dispatch-hook";
import { backends } from "tensorlab";
import { implementations } from "./implementations.js";

export const handles = backends.flatMap((backend) => implementations.map(([type, impl]) => register(backend, type, impl)));
