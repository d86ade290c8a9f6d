import { beforeEach, describe, expect, it, vi } from "vitest";
import { decisionSent, headerOutcome, useDecisionFeedback, type DecisionOutcome } from "./decisionFeedback";

vi.mock("../api/client", () => ({ runs: { get: vi.fn() }, approvals: { list: vi.fn(async () => []) } }));

function sent(key: string): void {
  decisionSent({ key, graph: "refund", version: "1.0.0", node: "approve", action: "issue_refund", decision: "approve", threadId: `t-${key}` });
}

function settle(key: string, change: Partial<DecisionOutcome>): void {
  useDecisionFeedback.setState((s) => ({ outcomes: s.outcomes.map((o) => (o.key === key ? { ...o, ...change } : o)) }));
}

const header = () => headerOutcome(useDecisionFeedback.getState())?.key ?? null;

describe("the top bar's decision note", () => {
  beforeEach(() => useDecisionFeedback.setState({ outcomes: [], offHeader: [] }));

  it("stays while its run has not settled, whatever the page", () => {
    sent("a");
    settle("a", { runId: "r1", status: "running" });
    useDecisionFeedback.getState().pageChanged();
    expect(header()).toBe("a");
  });

  it("goes once its run has settled and the page changes, and the inbox keeps it", () => {
    sent("a");
    settle("a", { runId: "r1", status: "success", ended: "succeeded" });
    expect(header()).toBe("a"); // seen settling where it was made
    useDecisionFeedback.getState().pageChanged();
    expect(header()).toBeNull();
    expect(useDecisionFeedback.getState().outcomes.map((o) => o.key)).toEqual(["a"]);
  });

  it("goes after a failure to follow the run too, and a new decision shows again", () => {
    sent("a");
    settle("a", { error: "the server is gone" });
    useDecisionFeedback.getState().pageChanged();
    expect(header()).toBeNull();
    sent("b");
    expect(header()).toBe("b");
    sent("a"); // decided again (the same card): shown again
    expect(header()).toBe("a");
  });
});
