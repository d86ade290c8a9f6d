/**
 * A chat page built on `useStream` from @langchain/langgraph-sdk, as a front
 * end on its own dev server would be: it talks to the Plait server named in
 * its address (`?api=…&key=…`), another origin than its own.
 */
import { useStream } from "@langchain/langgraph-sdk/react";
import { createRoot } from "react-dom/client";

const params = new URLSearchParams(window.location.search);

function Chat() {
  const stream = useStream<{ messages: { type: string; content: string }[] }>({
    apiUrl: params.get("api") ?? "",
    apiKey: params.get("key") ?? undefined,
    assistantId: "chat",
    messagesKey: "messages",
  });
  return (
    <main>
      <ol id="messages">
        {stream.messages.map((message, index) => (
          <li key={message.id ?? index} data-type={message.type}>
            {typeof message.content === "string" ? message.content : JSON.stringify(message.content)}
          </li>
        ))}
      </ol>
      <button id="send" onClick={() => void stream.submit({ messages: [{ type: "human", content: "How do refunds work?" }] })}>
        Send
      </button>
      <p id="state">{stream.isLoading ? "loading" : "idle"}</p>
      {stream.error ? <p id="error">{String(stream.error)}</p> : null}
    </main>
  );
}

createRoot(document.getElementById("root")!).render(<Chat />);
