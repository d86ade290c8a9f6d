"""Drafts: run unsaved spec text without publishing a version (the editor's "Run the draft").

``POST /drafts`` validates a spec body exactly as an upload (``POST /graphs``)
is, the tenant's code policy included, and stores it as a draft: an assistant
of its own (``name@<version>+draft.<digest>``) that runs like any version but
is never listed, never the newest and never written into the specs folder.
Runs of it carry ``metadata.plait_draft`` (decision 68).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from plait.server.api.deps import Svc
from plait.server.api.graphs import _SPEC_BODY, _check, _uploaded_text, version_to_api
from plait.server.auth.keys import Tenant
from plait.server.graphs.versions import save_draft

router = APIRouter(prefix="/drafts", tags=["graphs"])

_DRAFT_FILE = "<draft>"


@router.post(
    "",
    summary="Store unsaved spec text to run it (a draft)",
    status_code=201,
    openapi_extra=_SPEC_BODY,
)
async def create_draft(request: Request, services: Svc, tenant: Tenant) -> JSONResponse:
    """Validate a spec as an upload is and store it as a draft of the caller's tenant.

    The answer names the draft's ``assistant_id``: start runs with it as with
    any assistant. ``version`` is the stored version
    (``<metadata.version>+draft.<12 hex of the digest>``), ``spec_version``
    the spec's own. The same text again returns the same draft (200). Invalid
    specs get the upload's 422 with its ``errors``.
    """
    text = await _uploaded_text(request)
    draft, fresh = await save_draft(
        services.pool,
        text,
        file=_DRAFT_FILE,
        specs_dir=services.settings.specs_dir,
        tenant=tenant,
        tenant_modules=services.settings.tenant_modules,
        check=functools.partial(_check, services, keep=True),
    )
    body: dict[str, Any] = {
        **version_to_api(draft),
        "spec_version": draft.loaded.version,
    }
    return JSONResponse(
        json.loads(json.dumps(body, default=str)), status_code=201 if fresh else 200
    )
