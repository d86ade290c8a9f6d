"""Cross-origin requests: which browser front ends on other origins may call the API.

A front end served by its own dev server (Vite, Next, agent-chat-ui) is
another origin than ``plait serve``: the browser sends a preflight
``OPTIONS`` before any request with ``x-api-key`` or a JSON body, and reads
no answer that lacks ``Access-Control-Allow-Origin``. Starlette's
``CORSMiddleware`` answers them; this module decides what it allows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

#: Any port of this machine, by name or address: a local dev server works out of the box.
LOCAL_ORIGINS = r"https?://(localhost|127\.0\.0\.1|\[::1\])(:[0-9]+)?"
#: Response headers a front end must be able to read: the LangGraph SDKs take the
#: run's id from ``Content-Location`` and where to rejoin a stream from ``Location``.
EXPOSED_HEADERS = ("Content-Location", "Location", "Retry-After")
#: How long a browser may cache a preflight's answer (seconds).
PREFLIGHT_MAX_AGE = 600


@dataclass(frozen=True)
class CorsPolicy:
    """Which origins may call the API from a browser.

    ``origins`` are exact origins (``https://app.example.com``) or ``*``;
    ``origin_regex`` matches whole origins (default: any port of localhost,
    127.0.0.1 and [::1]; empty for none). ``credentials`` lets browsers send
    cookies and HTTP auth too (Plait's own auth is the ``x-api-key`` header,
    which needs no credentials); it cannot be combined with ``*``.
    """

    origins: tuple[str, ...] = ()
    origin_regex: str = LOCAL_ORIGINS
    credentials: bool = False

    def __post_init__(self) -> None:
        if self.credentials and "*" in self.origins:
            raise ValueError(
                "CORS credentials cannot be allowed for every origin ('*'): "
                "list the front ends' origins instead"
            )
        for origin in self.origins:
            if origin != "*" and (origin.endswith("/") or "://" not in origin):
                raise ValueError(
                    f"CORS origin {origin!r} is not an origin: write scheme://host[:port] "
                    "with no path, e.g. https://app.example.com"
                )


def parse_origins(text: str) -> tuple[str, ...]:
    """Origins from a comma-separated setting (``PLAIT_CORS_ORIGINS``)."""
    return tuple(origin.strip() for origin in text.split(",") if origin.strip())


def install_cors(app: FastAPI, policy: CorsPolicy) -> None:
    """Answer preflights and add CORS headers to every response of ``app``.

    Added last, so it wraps every other middleware: a 401, 413 or 422 reaches
    the front end with its problem JSON readable instead of as a CORS failure.
    """
    # Imported here: `plait serve --help` reads the policy's defaults, not the middleware.
    from starlette.middleware.cors import CORSMiddleware

    app.add_middleware(
        CORSMiddleware,
        allow_origins=list(policy.origins),
        allow_origin_regex=policy.origin_regex or None,
        allow_credentials=policy.credentials,
        allow_methods=["*"],
        # The SDKs send x-api-key, content-type, last-event-id and their own
        # x-* headers; every header the API reads is safe to allow.
        allow_headers=["*"],
        expose_headers=list(EXPOSED_HEADERS),
        max_age=PREFLIGHT_MAX_AGE,
    )
