// The CommonJS copy of the numba dispatch module, for frameworks and shims that work through require().
exports.numbaFuncify = require("../../builtin.js").createTable("numba");
