"""Approvals: the inbox's table (``records``) and deciding one (``decisions``)."""
