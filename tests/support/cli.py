"""Running hti-git and git from tests: click's runner in-process, git as a subprocess."""

from __future__ import annotations

import subprocess

from click.testing import CliRunner

from hti_git.cli import main


def git_out(path, *args) -> str:
    """stdout of `git -C path args...` (raises when git fails)."""
    return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True).stdout


def run(*args, ok=True):
    """`hti-git args...` through click's runner; with ok, its exit code must be 0."""
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result
