// The official AG-UI client (@ag-ui/client's HttpAgent) against an agent-core AG-UI endpoint:
// stream a run, disconnect at the first streamed text, reconnect from the last position seen,
// approve the interrupt, finish. Prints one JSON object per line; waits for "go" on stdin
// before reconnecting (the test lets the model finish meanwhile).
import { createInterface } from "node:readline";
import { HttpAgent } from "@ag-ui/client";

const [url, threadId] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const say = (value) => process.stdout.write(JSON.stringify(value) + "\n");
const agent = new HttpAgent({ url, threadId });
const received = [];
let last;

const recorder = (run, onEvent) => ({
  onEvent: ({ event }) => {
    received.push({ run, event });
    last = event.metadata?.["agent-core"]?.position ?? last;
    onEvent?.(event);
  },
});

agent.addMessage({ id: "u1", role: "user", content: "refund order 42" });
await agent.runAgent(
  { runId: "first" },
  recorder(1, (event) => {
    if (event.type === "TEXT_MESSAGE_CONTENT") agent.abortRun(); // the connection drops mid-answer
  }),
);
say({ step: "disconnected", position: last });
await lines.next();

await agent.runAgent({ runId: "again", forwardedProps: { after: last } }, recorder(2));
say({ step: "interrupted", interrupts: agent.pendingInterrupts });

const resume = agent.pendingInterrupts.map((i) => ({
  interruptId: i.id,
  status: "resolved",
  payload: { approved: true },
}));
await agent.runAgent({ runId: "approve", resume }, recorder(3));
say({ step: "done", received, messages: agent.messages });
process.exit(0);
