// Published events per second through the pipeline (admission, one interceptor, commit, four
// subscribers) beside a plain in-process EventEmitter with four listeners, same run.
import { EventEmitter } from "node:events";
import { Bus, type PublisherEnvelope, type Sink } from "../handwritten/bus/index.js";
import { fmt, report } from "./support.js";

const UI: PublisherEnvelope = { class: "ui_attached", generation: 1 };
const N = 20_000;

class CountingSink implements Sink {
  count = 0;
  offer(): "queued" {
    this.count++;
    return "queued";
  }
  close(): void {}
}

export async function run(): Promise<void> {
  const event = () => ({ name: "ui.prompt_draft" as const, data: { agent_id: "a-1", text: "draft text of a prompt being typed" } });

  const bus = new Bus();
  bus.addInterceptor(1, { selectors: ["ui.*"], priority: 0, intercept: (id) => bus.reply(1, id, { action: "pass" }) });
  const sinks = [new CountingSink(), new CountingSink(), new CountingSink(), new CountingSink()];
  for (const s of sinks) bus.subscribe({ historical: [], live: ["ui.*"] }, s);
  for (let i = 0; i < 2000; i++) await bus.publish(event(), UI);
  const t0 = performance.now();
  const all: Array<Promise<unknown>> = [];
  for (let i = 0; i < N; i++) all.push(bus.publish(event(), UI));
  await Promise.all(all);
  const busRate = (N * 1000) / (performance.now() - t0);

  const emitter = new EventEmitter();
  let received = 0;
  for (let i = 0; i < 4; i++) emitter.on("event", () => received++);
  const t1 = performance.now();
  for (let i = 0; i < N; i++) emitter.emit("event", event());
  await Promise.resolve();
  const emitterRate = (N * 1000) / (performance.now() - t1);
  if (received !== N * 4 || sinks.some((s) => s.count < N)) throw new Error("benchmark lost deliveries");

  report("bus publish (1 interceptor, 4 subscribers)", `${fmt(busRate, 0)} events/s`, "EventEmitter", `${fmt(emitterRate, 0)} events/s`, busRate / emitterRate);
}
