// node --import dispatch-hook/loader.mjs app.mjs
// Arranges the thread's exit audit (only when asked for), installs the hooks, and connects the
// default registry. Nothing else.

import { registry } from "./dist/bundle/index.js";
import { install } from "./dist/bundle/install.js";

const { DISPATCH_HOOK_AUDIT: mode, DISPATCH_HOOK_AUDIT_FILE: file } = process.env;
if (mode || file) {
  const { auditAtExit, parseAuditMode } = await import("./dist/bundle/audit.js");
  auditAtExit({ mode: parseAuditMode(mode), file });
}
install({ registry });
