// The CommonJS copy of the mlx dispatch module, for frameworks and shims that work through require().
exports.mlxFuncify = require("../../builtin.js").createTable("mlx");
