// --import this to load everything loader.mjs loads, then install only the do-nothing hook: the
// difference to the do-nothing hook alone is the cost of loading dispatch-hook's own modules.
import { install } from "../dist/bundle/install.js";
import "../dist/bundle/index.js";
import "./passthrough.mjs";

void install;
