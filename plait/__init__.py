"""Plait: agent teams as versioned YAML graphs, compiled to LangGraph and run durably on Postgres.

The one package Plait installs. ``plait.engine`` is the library (spec,
compiler, governance, tools, the run driver); ``plait.server`` the API,
workers and the ``plait`` command line, built on the engine. In the
repository they are the top-level folders ``engine/`` and ``server/``; this
folder links them under one import root, so the wheel puts nothing else
into site-packages.
"""
