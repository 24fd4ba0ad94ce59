/**
 * The runtime that generated code calls (facades, their markers, and epilogues). Its facts live in
 * the thread's hub, so loading this module twice (an ES and a CommonJS copy, or two installed
 * copies) changes nothing.
 */

export { signalEvaluated } from "./signal.js";
export {
  finish,
  missingRegistration,
  requireRegistrations,
  requireWhenLoaded,
  runRegistration,
  step,
} from "./window.js";
