"""Fixtures for the LLM ask tests live in query_support (importable by a unique name)."""

from query_support import *  # noqa: F401,F403
