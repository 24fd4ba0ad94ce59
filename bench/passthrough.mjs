// --import this for the do-nothing hook: registerHooks where dispatch-hook would use it, else register.
import module from "node:module";
import { hookMode } from "../dist/hooks/hook-mode.js";

if (hookMode() === "registerHooks") module.registerHooks({ load: (url, context, nextLoad) => nextLoad(url, context) });
else module.register(new URL("./passthrough-hooks.mjs", import.meta.url));
