/** Problem+json errors from the server (RFC 9457), shared by client.ts and sse.ts. */

/** One spec issue, as `plait validate --format json` prints it. */
export interface SpecIssue {
  file?: string | null;
  line?: number | null;
  column?: number | null;
  pointer?: string | null;
  message: string;
  fix?: string | null;
  code?: string | null;
  severity?: "error" | "warning" | string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly problem: Record<string, unknown> | null,
  ) {
    super(message);
    this.name = "ApiError";
  }

  /** Spec issues attached to a 422 (`errors` or `issues`), if any. */
  get issues(): SpecIssue[] {
    const found = this.problem?.errors ?? this.problem?.issues;
    return Array.isArray(found) ? (found as SpecIssue[]) : [];
  }
}

/** Build an ApiError from a failed response (problem+json, JSON or text). */
export async function problemFromResponse(response: Response): Promise<ApiError> {
  const text = await response.text();
  let problem: Record<string, unknown> | null = null;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) problem = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: the text itself is the message.
  }
  const detail = problem?.detail;
  const message =
    typeof detail === "string"
      ? detail
      : detail !== undefined
        ? JSON.stringify(detail)
        : typeof problem?.title === "string"
          ? problem.title
          : text || `${response.status} ${response.statusText}`;
  return new ApiError(response.status, message, problem);
}
