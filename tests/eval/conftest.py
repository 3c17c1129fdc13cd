"""Fixtures for the eval tests live in eval_support (importable by a unique name)."""

from eval_support import *  # noqa: F401,F403
