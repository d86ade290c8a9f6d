"""Python tools and functions used by the example specs in ``specs/``.

Everything here is deterministic and offline: small in-module data sets stand
in for the services a real team would call, so the examples run anywhere.
"""
