// node --import dispatch-hook/loader.mjs app.mjs
// Arranges the thread's exit audit, installs the hooks, and connects the default registry. Nothing else.
import { auditAtExit, install, parseAuditMode } from "./dist/bundle/hooks.js";
import { registry } from "./dist/bundle/index.js";

auditAtExit({ mode: parseAuditMode(process.env.DISPATCH_HOOK_AUDIT), file: process.env.DISPATCH_HOOK_AUDIT_FILE });
install({ registry });
