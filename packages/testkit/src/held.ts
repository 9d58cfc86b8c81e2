/**
 * A promise and the function that settles it, for a step a test holds open (a transaction, a
 * batch) or waits to see begin: Promise.withResolvers, which Node 20 does not have.
 */
export function held<T = void>(): { promise: Promise<T>; release: (value: T) => void } {
  let release!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}
