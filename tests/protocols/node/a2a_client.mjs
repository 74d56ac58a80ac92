// The official A2A JS client (@a2a-js/sdk's ClientFactory) against an agent-core A2A server: the agent
// card, a message answered at once, a streamed task that waits for an approval, the decision, the task read
// back, a task canceled while it waits, a task that failed, and an unknown task. Prints one JSON object.
import { ClientFactory } from "@a2a-js/sdk/client";

const [url] = process.argv.slice(2);
const client = await new ClientFactory().createFromUrl(url);
const card = await client.getAgentCard();
const text = (value) => ({ content: { $case: "text", value } });
const data = (value) => ({ content: { $case: "data", value } });
const message = (id, parts, extra = {}) => ({ messageId: id, role: 1, parts, ...extra });
const plain = (value) => JSON.parse(JSON.stringify(value, (k, v) => (typeof v === "bigint" ? Number(v) : v)));

const answered = await client.sendMessage({ message: message("m1", [text("hello")]) });
const contextId = answered.contextId;

const streamed = [];
for await (const event of client.sendMessageStream({ message: message("m2", [text("refund order 42")], { contextId }) })) {
  streamed.push(event);
}
const waiting = streamed.at(-1).payload.value;
const pending = waiting.status.message.parts.find((p) => p.content.$case === "data").content.value.pending;

const decided = [];
const decision = data({ tool_call_id: pending[0].tool_call_id, approved: true });
const taskId = waiting.taskId;
for await (const event of client.sendMessageStream({ message: message("m3", [decision], { contextId, taskId }) })) {
  decided.push(event);
}
const task = await client.getTask({ id: taskId });

const paused = await client.sendMessage({ message: message("m4", [text("refund order 7")], { contextId }) });
const canceled = await client.cancelTask({ id: paused.id });
let cancelAgain;
try {
  await client.cancelTask({ id: paused.id });
} catch (error) {
  cancelAgain = { name: error.constructor.name, message: error.message };
}
const failed = await client.sendMessage({ message: message("m5", [text("please fail")], { contextId }) });
let unknown;
try {
  await client.getTask({ id: `${contextId}:99` });
} catch (error) {
  unknown = { name: error.constructor.name, message: error.message };
}
process.stdout.write(
  JSON.stringify(plain({ card, answered, streamed, pending, decided, task, paused, canceled, cancelAgain, failed, unknown })) + "\n",
);
