/**
 * A fetch-based Server-Sent Events reader.
 *
 * EventSource can only GET, while run streams start with a POST body; so the
 * stream is read from `fetch` and parsed here. The parser follows the WHATWG
 * "event stream interpretation" rules (fields `event`, `data`, `id`; comment
 * lines start with `:`; an empty line dispatches). A dropped stream can be
 * rejoined with `Last-Event-ID` (the server replays what followed). The
 * request carries the API key like every other (`fetchWithKey`).
 */

import { fetchWithKey } from "./apiKey";
import { ApiError, problemFromResponse } from "./errors";

export interface SseMessage {
  event: string;
  /** The `data` field parsed as JSON (raw string when it is not JSON). */
  data: unknown;
  /** The last `id` seen on the stream (carried over as the spec says). */
  id: string | null;
}

/** Incremental parser: feed text chunks, take complete messages. */
export class SseParser {
  private buffer = "";
  private event = "";
  private data: string[] = [];
  private lastId: string | null = null;

  /** The id of the last dispatched message (for Last-Event-ID). */
  get lastEventId(): string | null {
    return this.lastId;
  }

  /** Parse a chunk; return the messages it completed. */
  push(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const out: SseMessage[] = [];
    // Lines end with \r\n, \n or \r; keep an unterminated tail for the next chunk.
    const lines = this.buffer.split(/\r\n|\n|\r/);
    this.buffer = lines.pop() ?? "";
    // A lone trailing \r may be half of \r\n: wait for the next chunk.
    for (const line of lines) {
      const message = this.line(line);
      if (message) out.push(message);
    }
    return out;
  }

  private line(line: string): SseMessage | null {
    if (line === "") {
      if (this.data.length === 0 && this.event === "") return null;
      const raw = this.data.join("\n");
      const message: SseMessage = {
        event: this.event || "message",
        data: parseData(raw),
        id: this.lastId,
      };
      this.event = "";
      this.data = [];
      return message;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
    else if (field === "id" && !value.includes("\0")) this.lastId = value;
    return null;
  }
}

function parseData(raw: string): unknown {
  if (raw === "") return null;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

export interface StreamOptions {
  method?: "GET" | "POST";
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Resume after this event id (sent as Last-Event-ID). */
  lastEventId?: string | null;
  /** Called with the response, e.g. to read its Location header. */
  onResponse?: (response: Response) => void;
}

/** Open an SSE stream and yield its messages until the server closes it. */
export async function* streamSse(url: string, options: StreamOptions = {}): AsyncGenerator<SseMessage> {
  const headers: Record<string, string> = { Accept: "text/event-stream", ...options.headers };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  if (options.lastEventId) headers["Last-Event-ID"] = options.lastEventId;
  const response = await fetchWithKey(url, {
    method: options.method ?? (options.body === undefined ? "GET" : "POST"),
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: options.signal,
  });
  if (!response.ok) throw await problemFromResponse(response);
  options.onResponse?.(response);
  if (!response.body) throw new ApiError(response.status, "the stream has no body", null);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new SseParser();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      for (const message of parser.push(value)) yield message;
    }
    // A final message without its blank line still counts.
    for (const message of parser.push("\n\n")) yield message;
  } finally {
    reader.releaseLock();
  }
}

/**
 * Stream a run, rejoining it once per drop with Last-Event-ID.
 *
 * The first request is `url`/`options`; the run's rejoin path comes from the
 * response's Location header or from the `metadata` event's
 * run_id (`/threads/{tid}/runs/{rid}/stream`). Ends after the `end` event or a
 * clean close.
 */
export async function* streamRun(url: string, options: StreamOptions & { threadId?: string; maxRejoins?: number } = {}): AsyncGenerator<SseMessage> {
  let rejoin: string | null = null;
  let lastId: string | null = options.lastEventId ?? null;
  let attempts = options.maxRejoins ?? 3;
  let first = true;
  for (;;) {
    try {
      const stream: AsyncGenerator<SseMessage> = first
        ? streamSse(url, {
            ...options,
            onResponse: (response) => {
              rejoin = rejoinPath(response) ?? rejoin;
              options.onResponse?.(response);
            },
          })
        : streamSse(rejoin as unknown as string, { signal: options.signal, lastEventId: lastId });
      first = false;
      for await (const message of stream) {
        if (message.id) lastId = message.id;
        if (message.event === "metadata" && options.threadId && rejoin === null) {
          const runId = (message.data as { run_id?: string } | null)?.run_id;
          if (runId) rejoin = `/threads/${options.threadId}/runs/${runId}/stream`;
        }
        yield message;
        if (message.event === "end") return;
      }
      return;
    } catch (error) {
      // Server-side problems (4xx/5xx) are not network drops: surface them.
      if (error instanceof ApiError || options.signal?.aborted || rejoin === null || attempts <= 0) throw error;
      attempts -= 1;
    }
  }
}

function rejoinPath(response: Response): string | null {
  // The SDKs rejoin through Location (`.../runs/{rid}/stream`); Content-Location names the run resource.
  const location = response.headers.get("Location");
  if (!location) return null;
  // Only same-origin paths: the page never talks to another host.
  try {
    const parsed = new URL(location, window.location.origin);
    return parsed.origin === window.location.origin ? parsed.pathname + parsed.search : null;
  } catch {
    return null;
  }
}
