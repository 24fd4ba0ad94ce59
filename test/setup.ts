// Every test file: the fixture trees it made are removed when it ends.
import { afterAll } from "vitest";
import { removeTrees } from "./integration/fixture.js";

afterAll(() => removeTrees());
