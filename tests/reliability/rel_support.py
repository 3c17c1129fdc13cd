"""Helpers for the fault-injection suite: index repositories, hti-git subprocesses, state checks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hti_git.workspace import init_index

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CONTRACT = FIXTURES / "slingerbaginc-05-27-2020-ex-10-7-consulting-agreement.txt"
DOC = "contract"  # every test compiles its sources as contract.txt


def git(path: Path, *args: str, check: bool = True) -> str:
    """stdout of `git -C path args...`."""
    proc = subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def versions() -> list[str]:
    """Three texts of the contract that compile to three different indexes."""
    base = CONTRACT.read_text(encoding="utf-8")
    second = base.replace("Consultant", "Advisor", 20)
    third = base + "\n\n12. ADDITIONAL TERMS\n\nThe Advisor shall keep all records for seven (7) years.\n"
    return [base, second, third]


@pytest.fixture
def index_path(tmp_path) -> Path:
    """A fresh index repository (hti.yaml, templates, .gitattributes committed)."""
    path = tmp_path / "idx"
    init_index(path)
    return path


def hti_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "hti_git", *args]


def run_hti(repo: Path, *args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run hti-git in `repo` as a separate process (the environment of the test, plus `env`)."""
    return subprocess.run(hti_command(*args), cwd=repo, capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, **(env or {})})


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """Run hti-git in this process (click's runner) with `-C repo`; shaped like run_hti's result.

    Same code path as the console script without interpreter start-up, for commands that need
    no process of their own."""
    from click.testing import CliRunner

    from hti_git.cli import main

    result = CliRunner().invoke(main, ["-C", str(repo), *args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, result.stderr)


def spawn_hti(repo: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    """Start hti-git in its own process group, so the git children it leaves can be awaited."""
    return subprocess.Popen(hti_command(*args), cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, **(env or {})}, start_new_session=True)


def kill_and_reap(proc: subprocess.Popen, timeout: float = 20) -> int:
    """SIGKILL the hti-git process only (as `kill -9 <pid>` or the OOM killer would), then wait
    until the git commands it had started have finished too, so the repository is at rest."""
    with _suppress_lookup():
        os.kill(proc.pid, signal.SIGKILL)
    code = proc.wait(timeout)
    proc.stdout.close()
    proc.stderr.close()
    wait_group_empty(proc.pid, timeout)
    return code


def wait_group_empty(pgid: int, timeout: float = 20) -> None:
    """Wait until no live process is left in group `pgid` (zombies awaiting init do not count)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _live_members(pgid):
            return
        time.sleep(0.005)
    raise AssertionError(f"processes of group {pgid} still running after {timeout}s")


def _live_members(pgid: int) -> list[int]:
    live = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state, ppid, pgrp, ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            live.append(int(entry))
    return live


class _suppress_lookup:
    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        return kind is ProcessLookupError


def wait_for_line(proc: subprocess.Popen, needle: str, timeout: float = 20) -> None:
    """Read proc's stderr until a line containing `needle` (the fault hook announces itself)."""
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            if proc.poll() is not None:
                break
            continue
        seen.append(line)
        if needle in line:
            return
    raise AssertionError(f"never saw {needle!r} on stderr (exit {proc.poll()}): {''.join(seen)[-2000:]}")


def head_state(repo: Path) -> dict:
    """HEAD (symbolic and resolved), every ref, and the doc tree at HEAD."""
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    head = git(repo, "rev-parse", "-q", "--verify", "HEAD", check=False).strip()
    doc_tree = git(repo, "rev-parse", "-q", "--verify", f"HEAD:{DOC}", check=False).strip()
    return {"symbolic": git(repo, "symbolic-ref", "-q", "HEAD", check=False).strip(),
            "head": head, "refs": refs, "doc_tree": doc_tree}


def assert_worktree_matches_head(repo: Path) -> None:
    """Index and working tree are exactly HEAD: no staged, unstaged or untracked change."""
    status = git(repo, "status", "--porcelain", "--untracked-files=all")
    assert status == "", f"index/working tree differ from HEAD:\n{status}"
    assert git(repo, "diff-index", "--cached", "HEAD") == ""


def assert_fsck_clean(repo: Path) -> None:
    proc = subprocess.run(["git", "-C", str(repo), "fsck", "--strict", "--no-dangling", "--no-progress"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and not proc.stdout.strip(), \
        f"git fsck: {proc.stdout}{proc.stderr}{_bad_objects(repo, proc.stdout + proc.stderr)}"


def _bad_objects(repo: Path, report: str) -> str:
    """What the loose objects fsck names hold (their files' times and first bytes), to tell a torn
    write from an object written whole with a wrong body."""
    import re
    import zlib

    out = []
    for path in sorted(set(re.findall(r"\.git/objects/[0-9a-f]{2}/[0-9a-f]{38}", report)))[:3]:
        file = repo / path
        try:
            raw = file.read_bytes()
            body = zlib.decompressobj().decompress(raw)[:300]
        except (OSError, zlib.error) as exc:
            body = repr(exc).encode()
        stat = file.stat() if file.exists() else None
        out.append(f"\n{path}: {len(raw) if stat else '?'} bytes, mtime {stat.st_mtime if stat else '?'}: {body!r}")
    return "".join(out)


def stub_handler(body: dict):
    """OpenAIStub handler for every prompt: standard compile like tests/compile's stub, ask like
    tests/query's, the connectivity check like the default."""
    from tests.compile import standard_stub
    from tests.query import model_stub
    from tests.support.openai_stub import default_handler

    system = next((m["content"] for m in body.get("messages", []) if m["role"] == "system"), "")
    if system.startswith(("Pick the documents", "You answer a question from", "Answer the question")):
        return model_stub.stub_handler(body)
    if system.startswith("You are a connectivity check"):
        return default_handler(body)
    return standard_stub.stub_handler(body)
