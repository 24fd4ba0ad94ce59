// node --import dispatch-hook/loader.mjs app.mjs
// Installs the hooks and connects the default registry. Nothing else: the main entry arms the exit
// audit when the environment asks for one (DISPATCH_HOOK_AUDIT, DISPATCH_HOOK_AUDIT_DIR).

import { registry } from "./dist/bundle/index.js";
import { install } from "./dist/bundle/install.js";

install({ registry });
// For the processes this one starts: the directory of the first of their tree to run the loader (install.ts, loaderVariable).
process.env.DISPATCH_HOOK_LOADER_CWD ||= process.cwd();
