// What test harnesses do between test files: put the module loader back the way it was when they
// started, so that one file's patches cannot leak into the next.
import Module from "node:module";

export function saveLoaderState() {
  const saved = { load: Module._load, require: Module.prototype.require, resolve: Module._resolveFilename };
  return function restoreLoaderState() {
    Module._load = saved.load;
    Module.prototype.require = saved.require;
    Module._resolveFilename = saved.resolve;
  };
}
