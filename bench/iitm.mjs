// --import this for the peer: import-in-the-middle's hook, limited to the 4 watched modules
// (BENCH_IITM_INCLUDE, a JSON list of file URLs). Sync hooks where it supports them, as it advises.
import module from "node:module";
import { Hook } from "import-in-the-middle";
import { supportsSyncHooks } from "import-in-the-middle/supports-sync-hooks.mjs";

const include = JSON.parse(process.env.BENCH_IITM_INCLUDE ?? "[]");
if (supportsSyncHooks()) {
  const { register } = await import("import-in-the-middle/register-hooks.mjs");
  register({ include });
} else {
  module.register("import-in-the-middle/hook.mjs", import.meta.url, { data: { include } });
}
Hook(include, (exported) => exported);
