// A question an extension publishes and the answer that names it (sdk/answers.ts): the first answer
// counts, a late or unknown one does nothing, and a timeout or the asker's abort ends the wait.
import { describe, expect, it } from "vitest";
import { AwaitedAnswers } from "../../../handwritten/sdk/index.js";

const never = new AbortController().signal;

describe("awaited answers", () => {
  it("takes the first answer to the question's own id; a second, or one to another id, is ignored", async () => {
    const answers = new AwaitedAnswers<string>();
    let asked = "";
    const waiting = answers.ask((id) => (asked = id), { timeoutMs: 60_000, onTimeout: "timeout", signal: never, onAbort: "abort" });
    expect(asked).toMatch(/^[0-9a-f]{24}$/);
    answers.answer("someone-else", "wrong");
    answers.answer(asked, "first");
    answers.answer(asked, "second");
    expect(await waiting).toEqual({ id: asked, answer: "first" });
    answers.answer(asked, "late"); // forgotten: nothing to resolve
  });

  it("ends with the timeout's value, or the abort's — also when aborted before it was asked (then nothing is published)", async () => {
    const answers = new AwaitedAnswers<string>();
    expect((await answers.ask(() => {}, { timeoutMs: 5, onTimeout: "timeout", signal: never, onAbort: "abort" })).answer).toBe("timeout");
    const withdraw = new AbortController();
    const waiting = answers.ask(() => withdraw.abort(), { timeoutMs: 60_000, onTimeout: "timeout", signal: withdraw.signal, onAbort: "abort" });
    expect((await waiting).answer).toBe("abort");
    let published = false;
    const gone = await answers.ask(() => (published = true), { timeoutMs: 60_000, onTimeout: "timeout", signal: withdraw.signal, onAbort: "abort" });
    expect(gone.answer).toBe("abort");
    expect(published).toBe(false);
  });
});
