import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

type ApiKeyModule = typeof import("./apiKey");
type ClientModule = typeof import("./client");
type SseModule = typeof import("./sse");

const KEY = "plait_k1_0123456789abcdef";
const NEEDS_KEY = "this server needs an API key: send it in the x-api-key header";
const BAD_KEY = "the API key is unknown or revoked; ask an admin for a new one";

/** A Map behind the Storage calls apiKey.ts makes (node has no localStorage). */
function memoryStorage(): Storage {
  const items = new Map<string, string>();
  return {
    get length() {
      return items.size;
    },
    clear: () => items.clear(),
    getItem: (name: string) => items.get(name) ?? null,
    key: (index: number) => [...items.keys()][index] ?? null,
    removeItem: (name: string) => void items.delete(name),
    setItem: (name: string, value: string) => void items.set(name, value),
  };
}

interface Sent {
  url: string;
  key: string | null;
}

/** A server that wants `valid` as x-api-key (none at all when `valid` is null), answering `body`. */
function fakeServer(valid: string | null, body: unknown = [{ name: "summarize" }]) {
  const sent: Sent[] = [];
  const fetchMock = vi.fn(async (url: string, init: RequestInit = {}) => {
    const headers = (init.headers ?? {}) as Record<string, string>;
    const key = headers["x-api-key"] ?? null;
    sent.push({ url, key });
    if (valid !== null && key !== valid) {
      const detail = key === null ? NEEDS_KEY : BAD_KEY;
      return new Response(JSON.stringify({ type: "about:blank", title: "Unauthenticated", status: 401, detail }), {
        status: 401,
        headers: { "Content-Type": "application/problem+json" },
      });
    }
    if (url.endsWith("/stream")) {
      return new Response('event: metadata\ndata: {"run_id": "r1"}\n\nevent: end\ndata: null\n\n', {
        status: 200,
        headers: { "Content-Type": "text/event-stream" },
      });
    }
    return new Response(JSON.stringify(body), { status: 200, headers: { "Content-Type": "application/json" } });
  });
  vi.stubGlobal("fetch", fetchMock);
  return sent;
}

/** Wait (bounded) until the key prompt is open; return its detail. */
async function promptOpens(apiKey: ApiKeyModule): Promise<string> {
  await vi.waitFor(() => expect(apiKey.apiKeyState().prompt).not.toBeNull(), { timeout: 2000 });
  return apiKey.apiKeyState().prompt!.detail;
}

let storage: Storage;
let apiKey: ApiKeyModule;
let client: ClientModule;
let sse: SseModule;

beforeEach(async () => {
  storage = memoryStorage();
  vi.stubGlobal("localStorage", storage);
  // Fresh module state (prompt, flags) for every test.
  vi.resetModules();
  apiKey = await import("./apiKey");
  client = await import("./client");
  sse = await import("./sse");
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("single-user server (no key)", () => {
  it("sends no x-api-key header and never asks", async () => {
    const sent = fakeServer(null);
    await expect(client.graphs.list()).resolves.toEqual([{ name: "summarize" }]);
    expect(sent).toEqual([{ url: "/graphs", key: null }]);
    expect(apiKey.apiKeyState()).toMatchObject({ prompt: null, asked: false, masked: null });
    expect(storage.length).toBe(0);
  });
});

describe("stored key", () => {
  it("is sent on API requests and on run streams", async () => {
    storage.setItem(apiKey.STORAGE_KEY, KEY);
    const sent = fakeServer(KEY);
    await client.assistants.search();
    const messages = [];
    for await (const message of sse.streamSse("/threads/t1/runs/stream", { body: { assistant_id: "a" } })) {
      messages.push(message.event);
    }
    expect(messages).toEqual(["metadata", "end"]);
    expect(sent).toEqual([
      { url: "/assistants/search", key: KEY },
      { url: "/threads/t1/runs/stream", key: KEY },
    ]);
    expect(apiKey.apiKeyState().prompt).toBeNull();
  });

  it("is masked for the UI", () => {
    expect(apiKey.maskKey(KEY)).toBe("plait_k1_••••");
    expect(apiKey.maskKey("0123456789abcdef0123")).toBe("••••0123");
    expect(apiKey.maskKey("short")).toBe("••••");
  });
});

describe("401 from the server", () => {
  it("asks once for all waiting requests, stores the key and retries them", async () => {
    const sent = fakeServer(KEY);
    const first = client.graphs.list();
    const second = client.approvals.list();
    expect(await promptOpens(apiKey)).toBe(NEEDS_KEY);
    expect(apiKey.apiKeyState().asked).toBe(true);

    apiKey.answerPrompt(`  ${KEY} `);
    await expect(first).resolves.toEqual([{ name: "summarize" }]);
    await expect(second).resolves.toEqual([{ name: "summarize" }]);
    expect(storage.getItem(apiKey.STORAGE_KEY)).toBe(KEY);
    expect(apiKey.apiKeyState()).toMatchObject({ prompt: null, masked: "plait_k1_••••" });
    // Each request: once without a key, once with it.
    expect(
      sent
        .filter((s) => s.key === null)
        .map((s) => s.url)
        .sort(),
    ).toEqual(["/approvals?status=pending", "/graphs"]);
    expect(
      sent
        .filter((s) => s.key === KEY)
        .map((s) => s.url)
        .sort(),
    ).toEqual(["/approvals?status=pending", "/graphs"]);
  });

  it("asks again with the server's detail when the key is refused", async () => {
    storage.setItem(apiKey.STORAGE_KEY, "plait_old_revoked");
    const sent = fakeServer(KEY);
    const listed = client.graphs.list();
    expect(await promptOpens(apiKey)).toBe(BAD_KEY);
    apiKey.answerPrompt("plait_typo_x");
    await vi.waitFor(() => expect(sent.map((s) => s.key)).toEqual(["plait_old_revoked", "plait_typo_x"]));
    expect(await promptOpens(apiKey)).toBe(BAD_KEY);
    apiKey.answerPrompt(KEY);
    await expect(listed).resolves.toEqual([{ name: "summarize" }]);
    expect(sent.map((s) => s.key)).toEqual(["plait_old_revoked", "plait_typo_x", KEY]);
  });

  it("fails with the server's 401 when the prompt is dismissed", async () => {
    fakeServer(KEY);
    const listed = client.graphs.list();
    await promptOpens(apiKey);
    apiKey.answerPrompt(null);
    const error = await listed.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(client.ApiError);
    expect(error).toMatchObject({ status: 401, message: NEEDS_KEY });
    expect(storage.length).toBe(0);
    expect(apiKey.apiKeyState()).toMatchObject({ prompt: null, asked: true, masked: null });
  });

  it("retries a run stream with the key, same Idempotency-Key", async () => {
    const keys: (string | null)[] = [];
    const idempotency: string[] = [];
    fakeServer(KEY);
    const inner = globalThis.fetch as (url: string, init?: RequestInit) => Promise<Response>;
    vi.stubGlobal("fetch", (url: string, init: RequestInit = {}) => {
      const headers = init.headers as Record<string, string>;
      keys.push(headers["x-api-key"] ?? null);
      idempotency.push(headers["Idempotency-Key"]);
      return inner(url, init);
    });
    const events: string[] = [];
    const reading = (async () => {
      for await (const message of client.runs.stream("t1", { assistant_id: "a" })) events.push(message.event);
    })();
    await promptOpens(apiKey);
    apiKey.answerPrompt(KEY);
    await reading;
    expect(events).toEqual(["metadata", "end"]);
    expect(keys).toEqual([null, KEY]);
    expect(new Set(idempotency).size).toBe(1);
  });

  it("an aborted request stops waiting; the prompt stays for the others", async () => {
    fakeServer(KEY);
    const controller = new AbortController();
    const stream = sse.streamSse("/threads/t1/runs/stream", { body: {}, signal: controller.signal });
    const streamed = stream.next();
    const listed = client.graphs.list();
    await promptOpens(apiKey);
    controller.abort();
    await expect(streamed).rejects.toMatchObject({ name: "AbortError" });
    expect(apiKey.apiKeyState().prompt).not.toBeNull();
    apiKey.answerPrompt(KEY);
    await expect(listed).resolves.toEqual([{ name: "summarize" }]);
  });
});

describe("changing the key by hand", () => {
  it("stores or forgets it and bumps the generation (lists reload)", () => {
    apiKey.changeKey(KEY);
    expect(storage.getItem(apiKey.STORAGE_KEY)).toBe(KEY);
    expect(apiKey.apiKeyState()).toMatchObject({ masked: "plait_k1_••••", generation: 1 });
    expect(apiKey.withApiKey({ Accept: "application/json" })).toEqual({ Accept: "application/json", "x-api-key": KEY });
    apiKey.changeKey(null);
    expect(storage.getItem(apiKey.STORAGE_KEY)).toBeNull();
    expect(apiKey.apiKeyState()).toMatchObject({ masked: null, generation: 2 });
    expect(apiKey.withApiKey({ Accept: "application/json" })).toEqual({ Accept: "application/json" });
  });
});

describe("a browser that refuses storage", () => {
  it("keeps the key for this page, so the retry still carries it", async () => {
    vi.stubGlobal("localStorage", {
      getItem: () => null,
      setItem: () => {
        throw new DOMException("quota", "QuotaExceededError");
      },
      removeItem: () => undefined,
    });
    const sent = fakeServer(KEY);
    const listed = client.graphs.list();
    await promptOpens(apiKey);
    apiKey.answerPrompt(KEY);
    await expect(listed).resolves.toEqual([{ name: "summarize" }]);
    expect(sent.map((s) => s.key)).toEqual([null, KEY]);
    expect(apiKey.apiKeyState().masked).toBe("plait_k1_••••");
  });
});
