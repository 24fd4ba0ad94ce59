// The choosing-a-backend example, run as a user runs it: from a fresh directory that depends on
// ml-ops and ml-ops-wasm, whose backend is declared only in its package.json and loaded on first use.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { appJson, makeTree, repoRoot, run } from "../integration/fixture.js";

const examples = join(repoRoot, "examples");

function app(): string {
  return makeTree({
    "package.json": appJson({ type: "module", dependencies: { "ml-ops": "*", "ml-ops-wasm": "*", tensorlab: "*" } }),
    "node_modules/tensorlab": { symlink: join(examples, "tensorlab") },
    "node_modules/ml-ops": { symlink: join(examples, "ml-ops") },
    "node_modules/ml-ops-wasm": { symlink: join(examples, "ml-ops-wasm") },
    "node_modules/dispatch-hook": { symlink: "<repo>" },
    "main.mjs": { symlink: join(examples, "choosing-a-backend/main.mjs") },
  });
}

async function steps(env: Record<string, string> = {}) {
  const dir = app();
  const result = await run(dir, ["--preserve-symlinks-main", "main.mjs"], env);
  const lines = result.stdout.split("\n").filter((line) => line.startsWith("{"));
  const parsed = lines.map(
    (line) =>
      JSON.parse(line) as {
        step: string;
        ran?: string[];
        error?: string;
        message?: string;
        wasmLoaded?: boolean;
        disagreements?: number;
        skipped?: string[];
      },
  );
  return { result, at: (name: string) => parsed.find((s) => s.step === name) };
}

describe("choosing a backend per call", () => {
  it("picks by the input's type, loads the package-declared backend only when it runs, fails fast on mixed inputs", async () => {
    const { result, at } = await steps();
    expect(result.code).toBe(0);
    expect(at("a plain tensor-shaped object")?.ran).toEqual(["default"]);
    expect(at("a float32 Tensor")?.ran).toEqual(["typed-array"]);
    expect(at("a WasmTensor, wasm not prioritized")?.ran).toEqual(["default"]);
    expect(at("before wasm is asked for")?.wasmLoaded).toBe(false);
    expect(at("a WasmTensor, wasm prioritized")?.ran).toEqual(["wasm"]);
    expect(at("after")?.wasmLoaded).toBe(true);
    expect(at("mixed: a Tensor and a WasmTensor")?.error).toBe("ERR_DISPATCH_MIXED_INPUTS");
    expect(at("reference check")?.disagreements).toBe(0);
    expect(result.stdout).toContain("1. wasm (requires opt-in): ./pool.js#pool; primary: ./wasm-tensor.js#WasmTensor");
  });

  it("takes the environment's control: a block, a prioritized opt-in backend, and a bad value that fails each call with a code", async () => {
    const blocked = await steps({ ML_OPS_BLOCK: "typed-array" });
    expect(blocked.at("a float32 Tensor")?.ran).toEqual(["default"]);
    expect(blocked.at("a float32 Tensor")?.skipped).toContain("typed-array: blocked by ML_OPS_BLOCK");
    const prioritized = await steps({ ML_OPS_PRIORITIZE: "wasm" });
    expect(prioritized.at("a WasmTensor, wasm not prioritized")?.ran).toEqual(["wasm"]);
    const bad = await steps({ ML_OPS_BLOCK: "typed_array" });
    expect(bad.at("a float32 Tensor")?.error).toBe("ERR_DISPATCH_UNKNOWN_BACKEND");
    expect(bad.at("a float32 Tensor")?.message).toContain(
      'pool(): ML_OPS_BLOCK="typed_array" names the backend "typed_array", which ml-ops does not declare (did you mean "typed-array"?)',
    );
  });
});
