// The floor every hook pays: a load hook that does nothing.
export async function load(url, context, nextLoad) {
  return nextLoad(url, context);
}
