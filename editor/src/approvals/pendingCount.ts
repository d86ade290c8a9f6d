/**
 * How many approvals wait for a decision: the top bar's badge. Refreshed
 * every few seconds while the page is visible, when the window regains
 * focus, and right after a decision made here (`refreshPending`) or a run view's
 * look at the pending approvals (`pendingApprovals`).
 */

import { useEffect } from "react";
import { create } from "zustand";
import { apiKeyState, storedKey } from "../api/apiKey";
import { approvals, type Approval } from "../api/client";

const POLL_MS = 5000;
/** The server lists at most this many per request: more reads as "99+". */
export const COUNT_LIMIT = 100;

interface PendingCount {
  /** null until known (or when the server cannot be asked, e.g. a missing API key). */
  count: number | null;
}

export const usePendingCount = create<PendingCount>()(() => ({ count: null }));

let inFlight: Promise<Approval[]> | null = null;
let again: Promise<Approval[]> | null = null;

function ask(): Promise<Approval[]> {
  return approvals.list("pending").then(
    (found) => {
      usePendingCount.setState({ count: found.length });
      return found;
    },
    (error: unknown) => {
      usePendingCount.setState({ count: null });
      throw error;
    },
  );
}

/**
 * The pending approvals, asked for now (the count follows): one request at a time, and never
 * answered by a request sent before the call (it may predate the decision or the park that
 * prompted it). Calls made while a request is out share one more request, sent when it returns.
 */
export function pendingApprovals(): Promise<Approval[]> {
  if (inFlight === null) {
    inFlight = ask().finally(() => {
      inFlight = null;
    });
    return inFlight;
  }
  again ??= inFlight
    .catch(() => undefined)
    .then(() => {
      again = null;
      return pendingApprovals();
    });
  return again;
}

/** Ask for the count again (errors show as no count). */
export function refreshPending(): Promise<void> {
  // The server wants a key nobody gave (or its prompt is open): a count is not worth asking again.
  const key = apiKeyState();
  if (key.prompt || (key.asked && !storedKey())) return Promise.resolve();
  return pendingApprovals().then(
    () => undefined,
    () => undefined,
  );
}

/** Keep the count fresh while mounted (the app shell mounts it once). */
export function usePendingPolling(): void {
  useEffect(() => {
    void refreshPending();
    const timer = window.setInterval(() => {
      if (document.visibilityState === "visible") void refreshPending();
    }, POLL_MS);
    const onFocus = () => void refreshPending();
    window.addEventListener("focus", onFocus);
    document.addEventListener("visibilitychange", onFocus);
    return () => {
      window.clearInterval(timer);
      window.removeEventListener("focus", onFocus);
      document.removeEventListener("visibilitychange", onFocus);
    };
  }, []);
}
