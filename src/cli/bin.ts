#!/usr/bin/env node
// The `dispatch-hook` command. Entry files only wire: the logic is in main.ts.
import { processIo } from "./io.js";
import { main } from "./main.js";

process.exitCode = await main(process.argv.slice(2), processIo());
