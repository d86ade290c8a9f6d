import { describe, expect, it } from "vitest";
import type { RolloutInfo } from "../api/client";
import { canaryCandidates, parseShare, roleLabel, rolloutSummary, runsLabel, versionRole } from "./rollout";

const CANARY: RolloutInfo = { graph: "g", stable: "1.0.0", canary: "1.1.0", share: 25, updated_at: "2026-12-03T12:00:00Z" };
const STABLE_ONLY: RolloutInfo = { ...CANARY, canary: null, share: 0 };

describe("rollout labels", () => {
  it("names each version's part and its share of new threads", () => {
    expect(versionRole(CANARY, "1.1.0")).toBe("canary");
    expect(versionRole(CANARY, "1.0.0")).toBe("stable");
    expect(versionRole(CANARY, "0.9.0")).toBeNull();
    expect(roleLabel(CANARY, "1.1.0")).toBe("canary · 25%");
    expect(roleLabel(CANARY, "1.0.0")).toBe("stable · 75%");
    expect(roleLabel(STABLE_ONLY, "1.0.0")).toBe("stable");
    expect(roleLabel(null, "1.0.0")).toBeNull();
  });

  it("says where new threads go", () => {
    expect(rolloutSummary(CANARY)).toBe("25% of new threads start on the canary 1.1.0, 75% on the stable 1.0.0.");
    expect(rolloutSummary(STABLE_ONLY)).toBe("New threads start on 1.0.0 (stable; no canary).");
    expect(rolloutSummary({ ...CANARY, stable: null, canary: null, share: 0 })).toBe("No rollout: new threads start on the newest version.");
  });

  it("counts runs and threads", () => {
    expect(runsLabel(undefined)).toBe("no runs");
    expect(runsLabel({ runs: 1, threads: 1 })).toBe("1 run on 1 thread");
    expect(runsLabel({ runs: 5, threads: 3 })).toBe("5 runs on 3 threads");
  });
});

describe("canaryCandidates", () => {
  const versions = ["1.0.0", "1.1.0", "1.2.0"];
  it("offers every version but the stable one", () => {
    expect(canaryCandidates({ graph: "g", stable: "1.1.0", canary: null, share: 0, updated_at: null }, versions)).toEqual(["1.0.0", "1.2.0"]);
  });
  it("offers every version but the newest when there is no rollout", () => {
    expect(canaryCandidates(null, versions)).toEqual(["1.0.0", "1.1.0"]);
  });
});

describe("parseShare", () => {
  it("reads whole percents from 0 to 100 and nothing else", () => {
    expect(parseShare("25")).toBe(25);
    expect(parseShare(" 0 ")).toBe(0);
    expect(parseShare("100")).toBe(100);
    expect(parseShare("101")).toBeNull();
    expect(parseShare("2.5")).toBeNull();
    expect(parseShare("-1")).toBeNull();
    expect(parseShare("")).toBeNull();
  });
});
