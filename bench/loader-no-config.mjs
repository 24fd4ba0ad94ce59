// --import this for the loader with nothing to watch: it loads and installs exactly as loader.mjs
// does, but reads no config. Between this and the full loader lies the cost of the watched path
// (discovery and scope learning, the 4 facades, applying the registrations).

import { registry } from "../dist/bundle/index.js";
import { install } from "../dist/bundle/install.js";

install({ registry, discover: false });
