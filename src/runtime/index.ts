/**
 * The runtime that generated code calls (facades, their markers, and epilogues). Its facts live in
 * the thread's hub, so loading this module twice (an ES and a CommonJS copy, or two installed
 * copies) changes nothing.
 */
export { requireRegistrations, requireWhenLoaded, runRegistration } from "./required-registrations.js";
export { early, enter, finish, missingRegistration, signalEvaluated, step } from "./window.js";
