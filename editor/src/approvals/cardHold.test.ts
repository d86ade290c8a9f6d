import { describe, expect, it } from "vitest";
import { ask, FREE, isHeld, pressEnded, touch, type Hold, type HoldStep } from "./cardHold";

/** Steps the hold from FREE through `steps`, collecting the placements made (whether each may pan). */
function walk(...steps: ((hold: Hold) => HoldStep)[]): { hold: Hold; placed: boolean[] } {
  let hold = FREE;
  const placed: boolean[] = [];
  for (const step of steps) {
    const next = step(hold);
    hold = next.hold;
    if (next.place !== null) placed.push(next.place);
  }
  return { hold, placed };
}

const pointer =
  (over: boolean, pressed = false) =>
  (hold: Hold) =>
    touch(hold, { pointer: over }, pressed);
const focus =
  (inside: boolean, pressed = false) =>
  (hold: Hold) =>
    touch(hold, { focus: inside }, pressed);
const asked = (pan: boolean) => (hold: Hold) => ask(hold, pan);

describe("approval card hold", () => {
  it("places at once while nobody holds the card", () => {
    expect(ask(FREE, true)).toEqual({ hold: FREE, place: true });
    expect(ask(FREE, false)).toEqual({ hold: FREE, place: false });
  });

  it("holds while the pointer is over the card or focus is inside it", () => {
    expect(isHeld({ ...FREE, pointer: true })).toBe(true);
    expect(isHeld({ ...FREE, focus: true })).toBe(true);
    expect(isHeld(FREE)).toBe(false);
    const held = walk(pointer(true), asked(true), asked(true));
    expect(held.placed).toEqual([]);
    expect(held.hold.owed).toEqual({ pan: true });
  });

  it("places once on release, as the last placement asked would have been", () => {
    // The card grew, then the view was fitted: placed for the fitted view, panning.
    expect(walk(pointer(true), asked(false), asked(true), pointer(false))).toEqual({ hold: FREE, placed: [true] });
    // The view was fitted, then the person moved it: no pan takes it back from them.
    expect(walk(focus(true), asked(true), asked(false), focus(false)).placed).toEqual([false]);
  });

  it("stays held until both the pointer and the focus have left", () => {
    // Clicked into the form, then the pointer wanders off while they type.
    const typing = walk(pointer(true), focus(true), asked(true), pointer(false));
    expect(typing.placed).toEqual([]);
    expect(isHeld(typing.hold)).toBe(true);
    expect(focus(false)(typing.hold)).toEqual({ hold: FREE, place: true });
  });

  it("places nothing on release when nothing was asked", () => {
    expect(walk(focus(true), focus(false)).placed).toEqual([]);
    expect(walk(pointer(true), pointer(false, true), (h) => pressEnded(h))).toEqual({ hold: FREE, placed: [] });
  });

  it("left with a press on the canvas, stays held until the press ends", () => {
    const clicked = walk(focus(true), asked(true), focus(false, true));
    expect(clicked.placed).toEqual([]);
    expect(isHeld(clicked.hold)).toBe(true);
    // A drag meanwhile is the person's: followed once the press ends, without a pan.
    expect(walk(focus(true), asked(true), focus(false, true), asked(false), (h) => pressEnded(h)).placed).toEqual([false]);
    expect(pressEnded(clicked.hold)).toEqual({ hold: FREE, place: true });
  });

  it("ignores a press while the card is still held or was never held", () => {
    expect(walk(pointer(true), focus(true), pointer(false, true), (h) => pressEnded(h), asked(true)).placed).toEqual([]);
    expect(walk(pointer(false, true), asked(true)).placed).toEqual([true]);
  });
});
