/**
 * The API key in the header: a button (shown once a key is stored or the
 * server asked for one) and the dialog that asks for a key on a 401 or lets
 * the user change or forget it. Single-user servers never show either.
 */
import { useEffect, useRef, useState, useSyncExternalStore, type FormEvent } from "react";
import { answerPrompt, apiKeyState, changeKey, subscribeApiKey } from "../api/apiKey";

/** The key state of apiKey.ts, re-rendering on change. */
export function useApiKeyState() {
  return useSyncExternalStore(subscribeApiKey, apiKeyState);
}

export function ApiKeyControl() {
  const { prompt, asked, masked } = useApiKeyState();
  const [managing, setManaging] = useState(false);
  const open = prompt !== null || managing;

  function close(): void {
    setManaging(false);
    // Dismissing the server's question lets the waiting requests fail with its 401.
    if (prompt) answerPrompt(null);
  }

  function use(key: string): void {
    setManaging(false);
    if (prompt && !managing) answerPrompt(key);
    else changeKey(key);
  }

  function forget(): void {
    setManaging(false);
    changeKey(null);
  }

  return (
    <>
      {(masked || asked) && (
        <button
          type="button"
          className="plait-key-button"
          data-testid="api-key-button"
          title="The API key this browser sends (x-api-key)"
          onClick={() => setManaging(true)}
        >
          API key{masked ? `: ${masked}` : ": none"}
        </button>
      )}
      {open && <ApiKeyDialog detail={prompt?.detail ?? null} masked={masked} onUse={use} onForget={masked ? forget : null} onCancel={close} />}
    </>
  );
}

interface ApiKeyDialogProps {
  /** Why the server asked (its 401 `detail`); null when the user opened the dialog. */
  detail: string | null;
  masked: string | null;
  onUse(key: string): void;
  onForget: (() => void) | null;
  onCancel(): void;
}

function ApiKeyDialog({ detail, masked, onUse, onForget, onCancel }: ApiKeyDialogProps) {
  const [key, setKey] = useState("");
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);

  function submit(event: FormEvent): void {
    event.preventDefault();
    if (key.trim()) onUse(key);
  }

  return (
    <div className="plait-key-backdrop" role="presentation">
      <form
        className="plait-key-dialog"
        role="dialog"
        aria-modal="true"
        aria-label="API key"
        data-testid="api-key-dialog"
        onSubmit={submit}
        onKeyDown={(event) => event.key === "Escape" && onCancel()}
      >
        <h2>API key</h2>
        {detail && (
          <p className="plait-error" data-testid="api-key-detail">
            {detail}
          </p>
        )}
        {masked && (
          <p className="plait-muted" data-testid="api-key-current">
            Current key: <code>{masked}</code>
          </p>
        )}
        <label>
          Paste an API key of this server
          <input
            ref={input}
            type="password"
            autoComplete="off"
            spellCheck={false}
            placeholder="plait_…"
            value={key}
            onChange={(event) => setKey(event.target.value)}
            data-testid="api-key-input"
          />
        </label>
        <p className="plait-help">
          Stored in this browser (localStorage of {window.location.origin}) and sent as <code>x-api-key</code> with every request.
        </p>
        <footer>
          {onForget && (
            <button type="button" onClick={onForget} data-testid="api-key-forget">
              Forget key
            </button>
          )}
          <span className="plait-spacer" />
          <button type="button" onClick={onCancel} data-testid="api-key-cancel">
            Cancel
          </button>
          <button type="submit" className="primary" disabled={!key.trim()} data-testid="api-key-use">
            Use key
          </button>
        </footer>
      </form>
    </div>
  );
}
