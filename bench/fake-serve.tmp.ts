// temp: a loopback model that answers a prompt with one shell call and a tool result with text; prints its base URL.
import { FakeOpenAI, textResponse, toolCallResponse } from "../test/support/fake-openai.js";
const fake = await FakeOpenAI.start();
let n = 0;
fake.respondWith((req) => {
  const msgs = (req.body as { messages?: Array<{ role: string }> }).messages ?? [];
  return msgs[msgs.length - 1]?.role === "tool" ? textResponse("ok") : toolCallResponse([{ id: `c${n++}`, name: "shell", arguments: '{"command":"echo hi"}' }]);
});
console.log(fake.baseUrl);
setInterval(() => {}, 1 << 30);
