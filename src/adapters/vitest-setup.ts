/** dispatch-hook/vitest/setup: for setupFiles. Adds toHaveLanded() and fails a test that leaves a registration pending. */
import { failOnPending } from "./vitest.js";

// Importing ./vitest.js adds the matcher.
failOnPending();
