import { describe, expect, it } from "vitest";
import { ask, FREE, isHeld, outOfSight, pressEnded, touch, type Hold, type HoldStep } from "./cardHold";

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
const asked =
  (pan: boolean, hidden = false) =>
  (hold: Hold) =>
    ask(hold, pan, hidden);

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

  it("yields while held when the card is out of sight: placed now, still held, nothing owed", () => {
    // Typing in the form, the window shrinks: the refit leaves the card under the run pane.
    const typing = walk(pointer(true), focus(true), asked(true), asked(true, true));
    expect(typing.placed).toEqual([true]);
    expect(typing.hold).toEqual({ ...FREE, pointer: true, focus: true });
    // Placed for the person's own move of the view: no pan, as a free card would be.
    expect(walk(focus(true), asked(false, true)).placed).toEqual([false]);
    // Left with a press on the canvas (held until it ends), a drag pushes the card out of sight.
    const dragged = walk(focus(true), focus(false, true), asked(false, true));
    expect(dragged.placed).toEqual([false]);
    expect(dragged.hold).toEqual({ ...FREE, leaving: true });
    // Back in sight, held as before: what is asked is owed, and placed once they leave.
    expect(walk(focus(true), asked(true, true), asked(true), focus(false)).placed).toEqual([true, true]);
    expect(walk(focus(true), asked(true, true), focus(false)).placed).toEqual([true]);
    // A free card is placed whether in sight or not.
    expect(ask(FREE, true, true)).toEqual({ hold: FREE, place: true });
  });
});

describe("card out of sight", () => {
  const area = { left: 128, top: 66, right: 840, bottom: 800 };
  const card = (left: number, top: number) => ({ left, top, right: left + 340, bottom: top + 290 });

  it("is in sight wholly inside the canvas and clear of what lies over it", () => {
    expect(outOfSight(card(400, 200), area, [])).toBe(false);
    // Flush with the edges, or with a panel, by a fraction of a pixel: still in sight.
    expect(outOfSight({ left: 127.6, top: 66, right: 840.4, bottom: 800 }, area, [])).toBe(false);
    expect(outOfSight(card(400, 200), area, [{ left: 740.3, top: 0, right: 900, bottom: 900 }])).toBe(false);
  });

  it("is out of sight past any edge of the canvas", () => {
    expect(outOfSight(card(722, 319), area, [])).toBe(true); // under the run pane beside the canvas
    expect(outOfSight(card(100, 200), area, [])).toBe(true);
    expect(outOfSight(card(400, 50), area, [])).toBe(true);
    expect(outOfSight(card(400, 600), area, [])).toBe(true);
  });

  it("is out of sight partly under the minimap, the controls or a pane over the canvas", () => {
    const minimap = { left: 600, top: 650, right: 800, bottom: 790 };
    expect(outOfSight(card(400, 400), area, [minimap])).toBe(true);
    expect(outOfSight(card(200, 200), area, [minimap])).toBe(false);
  });
});
