"""Tenants and API keys: who a request acts for (docs/api.md, "Tenants and API keys")."""
