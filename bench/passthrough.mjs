// --import this for the do-nothing hooks: registerHooks where dispatch-hook would use it, else
// register; a resolve and a load hook, as dispatch-hook installs.
import module from "node:module";
import { hookMode } from "../dist/hooks/hook-mode.js";

if (hookMode() === "registerHooks") {
  module.registerHooks({
    resolve: (specifier, context, next) => next(specifier, context),
    load: (url, context, next) => next(url, context),
  });
} else {
  module.register(new URL("./passthrough-hooks.mjs", import.meta.url));
}
