// An error and the errors it was caused by (`cause`), outermost first: fetch says "fetch failed" and the
// socket error under it says why; a write's wrapper hides the system error it carries.

// Deep enough for every wrapper goald and its SDKs make; a cycle of causes ends here too.
const MAX_DEPTH = 5;

/** `error` and its causes while each is an Error, outermost first, at most five. */
export function errorChain(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let current = error; current instanceof Error && chain.length < MAX_DEPTH; current = current.cause) chain.push(current);
  return chain;
}
