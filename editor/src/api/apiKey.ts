/**
 * The API key the editor sends as `x-api-key`, and the prompt for one.
 *
 * A single-user server needs no key: nothing is stored, no header is sent and
 * nobody is asked. Once the server answers 401 problem+json, `fetchWithKey`
 * opens the key prompt (one for all the requests that are waiting), stores
 * the key the user pastes in `localStorage` (per origin) and sends the
 * request again. The key itself never reaches the UI state: only its masked
 * form does, and it is never logged.
 */

export const API_KEY_HEADER = "x-api-key";
/** Where the key is kept in the browser (`localStorage`, per origin). */
export const STORAGE_KEY = "plait.apiKey";

export interface ApiKeyState {
  /** The open prompt: the server's `detail` of the 401 that asked for a key. */
  prompt: { detail: string } | null;
  /** Whether the server asked for a key while this page was open. */
  asked: boolean;
  /** The stored key, masked (null when none is stored). */
  masked: string | null;
  /** Bumped when the user changes or forgets the key by hand: lists reload their data. */
  generation: number;
}

// Where the key lives when the browser refuses storage (disabled, private mode): this page only.
let memoryKey: string | null = null;

function storage(): Storage | null {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}

/** The stored key, or null. */
export function storedKey(): string | null {
  let key: string | null = null;
  try {
    key = storage()?.getItem(STORAGE_KEY) ?? null;
  } catch {
    // Unreadable storage: the page's own copy below.
  }
  return key || memoryKey;
}

/** `headers` plus `x-api-key` when a key is stored (unchanged otherwise). */
export function withApiKey(headers: Record<string, string> = {}): Record<string, string> {
  const key = storedKey();
  return key ? { ...headers, [API_KEY_HEADER]: key } : headers;
}

/**
 * A key as the UI may show it: Plait keys keep their public id
 * (`plait_<key id>_••••`), any other key only its last four characters.
 */
export function maskKey(key: string): string {
  const plait = /^(plait_[^_]+_)./.exec(key);
  if (plait) return `${plait[1]}••••`;
  return key.length > 12 ? `••••${key.slice(-4)}` : "••••";
}

// ------------------------------------------------------------ state for React

let state: ApiKeyState = { prompt: null, asked: false, masked: maskedStored(), generation: 0 };
const listeners = new Set<() => void>();
let pending: { promise: Promise<boolean>; resolve: (answered: boolean) => void } | null = null;

function maskedStored(): string | null {
  const key = storedKey();
  return key ? maskKey(key) : null;
}

function update(change: Partial<ApiKeyState>): void {
  state = { ...state, ...change };
  for (const listener of listeners) listener();
}

/** Subscribe to key state changes (for `useSyncExternalStore`). */
export function subscribeApiKey(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The current key state (a new object on every change). */
export function apiKeyState(): ApiKeyState {
  return state;
}

function store(key: string | null): void {
  memoryKey = null;
  try {
    const target = storage();
    if (!target) throw new Error("no storage");
    if (key) target.setItem(STORAGE_KEY, key);
    else target.removeItem(STORAGE_KEY);
  } catch {
    // Without storage the key still works until the page is closed.
    memoryKey = key;
  }
}

/**
 * Ask the user for a key (the server said `detail`); resolves true once one
 * was given, false when the prompt was dismissed. Requests that fail while
 * the prompt is open wait for the same answer. `signal` only stops this
 * caller's wait: the prompt stays for the others.
 */
export function askForKey(detail: string, signal?: AbortSignal): Promise<boolean> {
  if (!pending) {
    let resolve: (answered: boolean) => void = () => {};
    const promise = new Promise<boolean>((done) => {
      resolve = done;
    });
    pending = { promise, resolve };
  }
  update({ prompt: { detail }, asked: true });
  const answer = pending.promise;
  if (!signal) return answer;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<boolean>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    void answer.then((answered) => {
      signal.removeEventListener("abort", abort);
      resolve(answered);
    });
  });
}

/** Answer the open prompt: a key (stored, waiting requests retry) or null (dismissed, they fail). */
export function answerPrompt(key: string | null): void {
  const trimmed = key?.trim() || null;
  if (trimmed) store(trimmed);
  const waiting = pending;
  pending = null;
  update({ prompt: null, masked: maskedStored() });
  waiting?.resolve(trimmed !== null);
}

/** Change (a key) or forget (null) the stored key by hand; pages that list data reload. */
export function changeKey(key: string | null): void {
  const trimmed = key?.trim() || null;
  store(trimmed);
  const waiting = pending;
  pending = null;
  update({ prompt: null, masked: maskedStored(), generation: state.generation + 1 });
  waiting?.resolve(trimmed !== null);
}

// ---------------------------------------------------------------------- fetch

function isProblem401(response: Response): boolean {
  const type = response.headers.get("Content-Type") ?? "";
  // Only the API's own problem+json: a proxy's HTML 401 is not a question for a key.
  return response.status === 401 && type.includes("json");
}

async function detailOf(response: Response): Promise<string> {
  try {
    const problem: unknown = await response.clone().json();
    const detail = (problem as { detail?: unknown } | null)?.detail;
    if (typeof detail === "string") return detail;
  } catch {
    // Unreadable body: the generic text below.
  }
  return "this server needs an API key";
}

/**
 * `fetch` with the stored key as `x-api-key`. On a 401 problem+json it asks
 * for a key and sends the request again with it (a 401 means the server did
 * nothing, so a retry is safe); when the user dismisses the prompt the 401
 * response is returned as it came, body unread.
 */
export async function fetchWithKey(url: string, init: RequestInit = {}): Promise<Response> {
  const headers = { ...(init.headers as Record<string, string> | undefined) };
  for (;;) {
    const sent = storedKey();
    const response = await fetch(url, { ...init, headers: withApiKey(headers) });
    if (!isProblem401(response)) return response;
    // Another request may have got a new key while this one was on the wire.
    const now = storedKey();
    if (now !== null && now !== sent) continue;
    if (!(await askForKey(await detailOf(response), init.signal ?? undefined))) return response;
  }
}
