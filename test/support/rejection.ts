// What a promise rejected with, for tests of refusals.
import { expect } from "vitest";

/** The message of the error `p` rejects with, once the test has checked it is a `type` (a `p` that resolves fails the check). */
export async function rejectionMessage(p: Promise<unknown>, type: new (...args: never[]) => Error): Promise<string> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(type);
  return (e as Error).message;
}
