import { beforeEach, describe, expect, it, vi } from "vitest";
import { pendingApprovals, refreshPending, usePendingCount } from "./pendingCount";

// The server's pending approvals; each list request answers when the test lets it.
const server = vi.hoisted(() => ({
  pending: 0,
  requests: [] as { answer: () => void }[],
}));
vi.mock("../api/client", () => ({
  approvals: {
    list: () =>
      new Promise<unknown[]>((resolve) => {
        const seen = server.pending;
        server.requests.push({ answer: () => resolve(Array.from({ length: seen })) });
      }),
  },
}));

function answerNext(): void {
  server.requests.shift()!.answer();
}

describe("refreshPending", () => {
  beforeEach(() => {
    server.pending = 0;
    server.requests = [];
    usePendingCount.setState({ count: null });
  });

  it("is not answered by a request sent before it was called", async () => {
    server.pending = 6;
    const poll = refreshPending(); // the 5 s refresh, sent before the decision
    server.pending = 5; // a decision made elsewhere
    const afterDecision = refreshPending();
    expect(server.requests).toHaveLength(1);
    answerNext();
    await poll;
    expect(usePendingCount.getState().count).toBe(6);
    // The call made after the decision asks once more, and its answer is the one shown.
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
    answerNext();
    await afterDecision;
    expect(usePendingCount.getState().count).toBe(5);
  });

  it("sends one request for every call made while one is out", async () => {
    server.pending = 2;
    void refreshPending();
    const calls = [refreshPending(), refreshPending(), refreshPending()];
    answerNext();
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
    answerNext();
    await Promise.all(calls);
    expect(server.requests).toHaveLength(0);
    expect(usePendingCount.getState().count).toBe(2);
  });

  it("gives the run view the list its count came from, in one request", async () => {
    server.pending = 3;
    const listed = pendingApprovals();
    expect(server.requests).toHaveLength(1);
    answerNext();
    expect(await listed).toHaveLength(3);
    expect(usePendingCount.getState().count).toBe(3);
  });
});
