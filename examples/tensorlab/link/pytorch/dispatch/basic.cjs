// The CommonJS copy of the pytorch dispatch module, for frameworks and shims that work through require().
exports.pytorchFuncify = require("../../builtin.js").createTable("pytorch");
