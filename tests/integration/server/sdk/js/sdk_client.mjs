// A client written against @langchain/langgraph-sdk 1.15, unchanged, pointed at
// a Plait server: `node sdk_client.mjs <url>` prints one JSON object with what
// each call returned; tests/integration/server/sdk/test_js_sdk.py checks it.
import { Client } from "@langchain/langgraph-sdk";

const url = process.argv[2];
if (!url) {
  console.error("usage: node sdk_client.mjs <server url>");
  process.exit(2);
}
const client = new Client({ apiUrl: url });
const results = {};

/** Every chunk of a stream, as {event, data}. */
async function collect(stream) {
  const parts = [];
  for await (const part of stream) parts.push({ event: part.event, data: part.data });
  return parts;
}

// Assistants: the graph by name.
const assistants = await client.assistants.search({ graphId: "sdk-echo" });
results.assistants = assistants.map((a) => ({ graph_id: a.graph_id, version: a.version }));

// Every stream mode a front end asks for, the two message forms together.
const thread = await client.threads.create({ metadata: { from: "js" } });
results.thread = { thread_id: thread.thread_id, metadata: thread.metadata };
results.stream = await collect(
  client.runs.stream(thread.thread_id, "sdk-echo", {
    input: { text: "hello" },
    streamMode: ["values", "updates", "messages", "messages-tuple"],
  }),
);

// `messages` alone: what code written for LangGraph Platform reads.
results.messages_only = await collect(
  client.runs.stream(thread.thread_id, "sdk-echo", {
    input: { text: "again" },
    streamMode: "messages",
  }),
);

// Rejoin a finished run's stream after its second event, narrowed to `updates`
// (the SDK sends stream_mode as query parameters).
const streamed = await collect(
  client.runs.stream(thread.thread_id, "sdk-echo", {
    input: { text: "rejoin" },
    streamMode: ["values", "updates"],
    streamResumable: true,
  }),
);
const runId = streamed[0].data.run_id;
results.rejoin = await collect(
  client.runs.joinStream(thread.thread_id, runId, { lastEventId: "2", streamMode: ["updates"] }),
);

// wait, and the thread's state.
const waitThread = await client.threads.create();
results.wait = await client.runs.wait(waitThread.thread_id, "sdk-echo", { input: { text: "wait" } });
const state = await client.threads.getState(waitThread.thread_id);
results.state = { values: state.values, next: state.next };

// An approval interrupt, resumed with command.resume.
const refund = await client.threads.create();
const stopped = await client.runs.wait(refund.thread_id, "refund-approval", {
  input: { order_id: "A-1002", amount: 180, reason: "Item arrived broken" },
});
const waiting = await client.threads.getState(refund.thread_id);
results.interrupt = {
  wait_interrupts: stopped.__interrupt__ ?? null,
  next: waiting.next,
  thread_status: (await client.threads.get(refund.thread_id)).status,
};
const resumed = await client.runs.wait(refund.thread_id, "refund-approval", {
  command: { resume: { decision: "approve", comment: "photos confirm it" } },
});
results.resumed = {
  decision: resumed.decision,
  refund: resumed.refund,
  thread_status: (await client.threads.get(refund.thread_id)).status,
};

// client.threads.stream: the thread protocol (commands + event streams).
const chat = client.threads.stream({ assistantId: "sdk-echo" });
const texts = [];
const reading = (async () => {
  for await (const message of chat.messages) texts.push(await message.text);
})();
const started = await chat.run.start({ input: { text: "protocol" } });
const output = await chat.output;
await reading;
results.thread_stream = {
  run_id: started.run_id,
  output,
  texts,
  interrupted: chat.interrupted,
  state: (await chat.state.get({ namespace: [] })).values,
};
await chat.close();

// A chat: the reply streams on `messages` and lands in values.messages.
const support = client.threads.stream({ assistantId: "chat" });
const streamedReplies = [];
const replies = (async () => {
  for await (const message of support.messages) {
    streamedReplies.push({ id: message.id, text: await message.text });
  }
})();
await support.run.start({ input: { messages: [{ role: "user", content: "How do refunds work?" }] } });
const conversation = (await support.output).messages;
await replies;
results.thread_chat = {
  streamed: streamedReplies,
  conversation: conversation.map((m) => ({ type: m.type ?? m.getType(), id: m.id, content: m.content })),
};
await support.close();

// An agent's tool calls arrive as content blocks of its messages.
const planner = client.threads.stream({ assistantId: "planner-team" });
const toolCalls = [];
const planning = (async () => {
  for await (const message of planner.messages) {
    await message.text;
    for (const block of message.blocks) {
      if (block.type === "tool_call") toolCalls.push({ node: message.node, name: block.name, args: block.args });
    }
  }
})();
await planner.run.start({ input: { goal: "Ship the CSV export feature", start: "2026-12-07" } });
await planner.output;
await planning;
results.thread_tool_calls = toolCalls;
await planner.close();

// An interrupt seen on the thread stream, answered with input.respond on the same thread.
const approval = client.threads.stream({ assistantId: "refund-approval" });
await approval.run.start({ input: { order_id: "A-1002", amount: 180, reason: "Item arrived broken" } });
await approval.output;
const [pending] = approval.interrupts;
results.thread_interrupt = { interrupted: approval.interrupted, payload: pending.payload };
await approval.close();
const answer = client.threads.stream(approval.threadId, { assistantId: "refund-approval" });
await answer.input.respond({
  namespace: [],
  interrupt_id: pending.interruptId,
  response: { decision: "approve", comment: "photos confirm it" },
});
const after = await answer.output;
results.thread_resumed = { refund: after.refund, interrupted: answer.interrupted };
try {
  await answer.input.respond({ namespace: [], interrupt_id: "no-such-interrupt", response: {} });
  results.thread_bad_respond = null;
} catch (error) {
  results.thread_bad_respond = { status: error.status ?? null, message: String(error.message) };
}
await answer.close();

console.log(JSON.stringify(results));
