// --import this to load everything loader.mjs loads, then install only the do-nothing hook: the
// difference to the do-nothing hook alone is the cost of loading dispatch-hook's own modules.
import "../dist/index.js";
import "../dist/hooks/install.js";
import "../dist/hooks/audit-mode.js";
import "./passthrough.mjs";
