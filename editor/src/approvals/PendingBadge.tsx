/** The top bar's count of approvals waiting for a decision (hidden at zero). */

import { COUNT_LIMIT, usePendingCount, usePendingPolling } from "./pendingCount";

export function PendingBadge() {
  usePendingPolling();
  const count = usePendingCount((s) => s.count);
  if (!count) return null;
  const text = count >= COUNT_LIMIT ? `${COUNT_LIMIT - 1}+` : String(count);
  return (
    <span
      className="approvals-badge"
      data-testid="approvals-badge"
      data-count={count}
      title={`${text} approval${count === 1 ? "" : "s"} waiting for a decision`}
    >
      {text}
    </span>
  );
}
