// Runs the integration suite on this machine's Node and on the latest 22, 24 and 26 from the npm
// registry (through npx), one after another. Usage: node scripts/test-matrix.mjs [major or exact version …]
import { execFileSync, spawnSync } from "node:child_process";

const majors = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["20", "22", "24", "26"];
const npx = process.platform === "win32" ? "npx.cmd" : "npx";
const failed = [];
for (const major of majors) {
  let binary = process.execPath;
  if (major !== process.versions.node.split(".")[0]) {
    binary = execFileSync(npx, ["-y", `node@${major}`, "-p", "process.execPath"], { encoding: "utf8" }).trim();
  }
  const version = execFileSync(binary, ["-p", "process.versions.node"], { encoding: "utf8" }).trim();
  console.log(`\n== integration suite on Node ${version} (${binary})`);
  const result = spawnSync(
    process.execPath,
    [
      "node_modules/vitest/vitest.mjs",
      "run",
      "test/integration",
      "test/loading/installing-the-loader.test.ts",
      "test/package/no-global-mutation.test.ts",
    ],
    {
      stdio: "inherit",
      env: { ...process.env, DISPATCH_HOOK_TEST_NODE: binary, DISPATCH_HOOK_TESTS: "full" },
    },
  );
  if (result.status !== 0) failed.push(version);
}
if (failed.length > 0) {
  console.error(`\nintegration suite failed on Node ${failed.join(", ")}`);
  process.exit(1);
}
console.log(`\nintegration suite passed on Node ${majors.join(", ")}`);
