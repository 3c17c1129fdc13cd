"""Fixtures for the reliability suite live in rel_support (importable by a unique name)."""

from rel_support import *  # noqa: F401,F403
