// The CommonJS copy of the jax dispatch module, for frameworks and shims that work through require().
exports.jaxFuncify = require("../../builtin.js").createTable("jax");
