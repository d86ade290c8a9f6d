import { describe, expect, it } from "vitest";
import { nextTimerPoll } from "./runController";

describe("following a thread parked on wait timers", () => {
  const now = Date.parse("2026-12-03T14:00:00Z");

  it("looks at the earliest time, and every few seconds before it", () => {
    expect(nextTimerPoll({ pause: "2026-12-03T14:00:02Z" }, now)).toBe(2000);
    expect(nextTimerPoll({ a: "2026-12-03T15:00:00Z", b: "2026-12-03T14:00:03Z" }, now)).toBe(3000);
    expect(nextTimerPoll({ pause: "2026-12-03T15:00:00Z" }, now)).toBe(5000);
  });

  it("looks every second once the time has passed (the timer fires within it)", () => {
    expect(nextTimerPoll({ pause: "2026-12-03T13:59:00Z" }, now)).toBe(1000);
  });

  it("does not look without a timer", () => {
    expect(nextTimerPoll({}, now)).toBeNull();
    expect(nextTimerPoll({ pause: "not a time" }, now)).toBeNull();
  });
});
