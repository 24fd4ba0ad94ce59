// --import this for the loader with nothing to watch: it loads and installs exactly as loader.mjs
// does, but reads no config. Between this and the full loader lies the cost of the watched path
// (discovery and scope learning, the 4 facades, applying the registrations).
import { auditAtExit, install, parseAuditMode } from "../dist/bundle/hooks.js";
import { registry } from "../dist/bundle/index.js";

auditAtExit({ mode: parseAuditMode(process.env.DISPATCH_HOOK_AUDIT) });
install({ registry, discover: false });
