/** dispatch-hook/vitest/setup: for setupFiles. Adds toHaveLanded() and fails a test that leaves a registration pending. */
import { expect } from "vitest";
import { failOnPending, matchers } from "./vitest.js";

expect.extend(matchers);
failOnPending();
