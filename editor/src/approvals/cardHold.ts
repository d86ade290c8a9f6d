/**
 * An approval card holds its place while a person uses it: the pointer is
 * over it, or focus is inside it (the edit form, a button). A placement asked
 * for meanwhile (the card grew, the view was fitted, a pan of ours ended)
 * would move the card, or pan the view, under their hand: it is owed instead,
 * and made once they have left the card, as the last one asked would have
 * been (panning after a fit, not after the person moved the view). When they
 * leave it with a press on the canvas (a click beside the card takes the
 * focus), the card stays held until that press ends: it may be a drag, and
 * the view is theirs while they drag it.
 *
 * A held card still yields when the view has pushed it out of sight (a
 * smaller window refits the view, and the card it follows ends under a pane
 * or past the canvas's edge): a card the person is using must not be left
 * hidden. A placement asked for then is made at once, as if the card were
 * free; the hold stays (the person is still in the card), and nothing is
 * owed after it.
 */

import type { Rect } from "./cardPlacement";

export interface Hold {
  /** The pointer is over the card. */
  pointer: boolean;
  /** Focus is inside the card. */
  focus: boolean;
  /** Left while a press on the canvas was under way: held until it ends. */
  leaving: boolean;
  /** The placement owed since the hold began (`pan`: it may pan the view), or null. */
  owed: { pan: boolean } | null;
}

export const FREE: Hold = { pointer: false, focus: false, leaving: false, owed: null };

export const isHeld = (hold: Hold): boolean => hold.pointer || hold.focus || hold.leaving;

/** What a step decides: the hold after it, and the placement to make now (whether it may pan), if any. */
export interface HoldStep {
  hold: Hold;
  place: boolean | null;
}

/**
 * A placement is asked for: made now if the card is free, or held but `hidden` (out of sight,
 * see `outOfSight`; the hold stays), and that settles anything owed; else owed.
 */
export function ask(hold: Hold, pan: boolean, hidden = false): HoldStep {
  if (!isHeld(hold) || hidden) return { hold: { ...hold, owed: null }, place: pan };
  return { hold: { ...hold, owed: { pan } }, place: null };
}

/** Half a pixel: a box's edges are fractional, and a placed card lies flush with others. */
const SLACK = 0.5;

/**
 * Whether the card (`card`, its box as it stands) is out of sight: not wholly inside the
 * visible canvas (`area`), or partly under something over it (`obstacles`: the minimap, the
 * controls, a pane over the canvas).
 */
export function outOfSight(card: Rect, area: Rect, obstacles: readonly Rect[]): boolean {
  const inside = card.left >= area.left - SLACK && card.top >= area.top - SLACK && card.right <= area.right + SLACK && card.bottom <= area.bottom + SLACK;
  const under = (o: Rect) => card.left < o.right - SLACK && o.left < card.right - SLACK && card.top < o.bottom - SLACK && o.top < card.bottom - SLACK;
  return !inside || obstacles.some(under);
}

/** The pointer or the focus came or went (`pressed`: a press on the canvas is under way). */
export function touch(hold: Hold, change: Partial<Pick<Hold, "pointer" | "focus">>, pressed: boolean): HoldStep {
  const next = { ...hold, ...change };
  const letGo = (hold.pointer || hold.focus) && !next.pointer && !next.focus;
  return due(letGo && pressed ? { ...next, leaving: true } : next);
}

/** The press on the canvas ended. */
export function pressEnded(hold: Hold): HoldStep {
  return due({ ...hold, leaving: false });
}

/** The owed placement, once the card is free. */
function due(hold: Hold): HoldStep {
  if (isHeld(hold) || !hold.owed) return { hold, place: null };
  return { hold: { ...hold, owed: null }, place: hold.owed.pan };
}
