// THE OLD WAY, kept only to reproduce the bug. Like a sys.meta_path finder in Python, it patches the
// process-wide module loader so that ml-ops registers into tensorlab's tables right after one of
// its (CommonJS) dispatch modules loads. The framework cannot see this, and nothing notices when
// someone puts the original loader back.
const Module = require("node:module");
const { implementations } = require("./implementations.js");

const dispatchModule = /[\\/]tensorlab[\\/]link[\\/](\w+)[\\/]dispatch[\\/]basic\.cjs$/;
const originalLoad = Module._load;

Module._load = function loadAndRegister(...args) {
  const [request, parent, isMain] = args;
  const exports = originalLoad.apply(this, args);
  const match = dispatchModule.exec(Module._resolveFilename(request, parent, isMain));
  if (match !== null) {
    const table = exports[`${match[1]}Funcify`];
    for (const [type, impl] of implementations) if (!table.has(type)) table.register(type, impl);
  }
  return exports;
};
