/**
 * The runtime that generated code calls (facades, their markers, and epilogues). It keeps no state
 * of its own: each table notice and each window answers for itself on the channels, so loading this
 * module twice (an ES and a CommonJS copy, or two installed copies) changes nothing.
 */
export { signalEvaluated } from "./evaluated.js";
export { requireRegistrations } from "./require-registrations.js";
export { missingRegistration, openWindow, runRegistration } from "./window.js";
