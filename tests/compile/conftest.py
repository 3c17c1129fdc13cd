"""Fixtures for the standard compile tests live in standard_support (importable by a unique name)."""

from standard_support import *  # noqa: F401,F403
