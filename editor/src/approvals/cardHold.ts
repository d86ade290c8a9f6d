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
 */

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

/** A placement is asked for: made now if the card is free (it settles anything owed), else owed. */
export function ask(hold: Hold, pan: boolean): HoldStep {
  if (!isHeld(hold)) return { hold: { ...hold, owed: null }, place: pan };
  return { hold: { ...hold, owed: { pan } }, place: null };
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
