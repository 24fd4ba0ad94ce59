// The floor every hook pays: resolve and load hooks that do nothing (the same pair dispatch-hook installs).
export async function resolve(specifier, context, nextResolve) {
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  return nextLoad(url, context);
}
