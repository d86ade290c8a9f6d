/** What an edit changes before it is sent: old → new per argument. */

import { changesOf } from "./argumentFields";

export function ArgumentChanges({ before, after }: { before: unknown; after: unknown }) {
  const changes = changesOf(before, after);
  if (changes.length === 0)
    return (
      <p className="muted" data-testid="approval-diff-empty">
        No change yet: edit a value above.
      </p>
    );
  return (
    <table className="argument-changes" data-testid="approval-diff">
      <tbody>
        {changes.map((change) => (
          <tr key={change.key} data-field={change.key}>
            <th>{change.key || "arguments"}</th>
            <td className="diff-removed">{change.before ?? "(absent)"}</td>
            <td aria-hidden>→</td>
            <td className="diff-added">{change.after ?? "(removed)"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
