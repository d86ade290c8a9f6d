"""Values of Plait's own settings, which no spec may read as a secret under any name.

A leaf module: the store registers the database URL it connects with, the
server its admin key, and secret resolution (``plait.engine.governance.secrets``,
``plait.server.auth.tenant_secrets``) refuses any value that is or carries one.
"""

from __future__ import annotations

import os

from psycopg.conninfo import conninfo_to_dict

__all__ = ["is_protected", "protect"]

#: Settings whose values no secret may hold, whatever its name.
_PROTECTED_ENV = ("PLAIT_DATABASE_URL", "PLAIT_ADMIN_KEY")


#: Values registered by the process (the admin key and database URL it runs with).
_protected: set[str] = set()


def protect(*values: str | None) -> None:
    """Never give ``values`` to a spec, under any name (the server registers its settings)."""
    for value in values:
        if value:
            _protected.update(_forms(value))


def _forms(setting: str) -> set[str]:
    """A setting and, for a connection string, its password."""
    forms = {setting}
    if "://" in setting or "=" in setting:
        try:
            password = conninfo_to_dict(setting).get("password")
        except Exception:  # not a connection string
            password = None
        if password:
            forms.add(str(password))
    return forms


def is_protected(value: str) -> bool:
    """Whether ``value`` is (or carries) one of Plait's own settings."""
    protected = set(_protected)
    for name in _PROTECTED_ENV:
        setting = os.environ.get(name)
        if setting:
            protected |= _forms(setting)
    # A short setting (a password may be a common word) is refused only as the whole value.
    return any(value == s or (len(s) >= 16 and s in value) for s in protected)
