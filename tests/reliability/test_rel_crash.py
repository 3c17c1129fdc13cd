"""Crash safety: a compile killed at any point leaves the old or the new index, never a mix.

Each kill is a SIGKILL of the hti-git process (git commands it started run to their end, as they
would after `kill -9`). After it: HEAD and refs are the old or the new commit, the document tree at
HEAD is exactly a complete compile, `git fsck --strict` is clean, index and working tree match HEAD
once any hti-git command has opened the repository (the journal roll-forward), and the next
compile finishes. HTI_FAULT (hti_git/store.py) places kills exactly around the ref move.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import time

import pytest
from rel_support import (
    DOC,
    assert_fsck_clean,
    assert_worktree_matches_head,
    cli,
    head_state,
    kill_and_reap,
    run_hti,
    spawn_hti,
    versions,
)

from hti_git.compile.pipeline import compile_path
from hti_git.review.verify import verify_snapshot
from hti_git.store import JOURNAL
from hti_git.workspace import init_index, open_index

KILLS = int(os.environ.get("HTI_REL_KILLS", "30"))
KILL_SECONDS = float(os.environ.get("HTI_REL_KILL_SECONDS", "20"))  # wall-clock bound for CI


@pytest.fixture(scope="module")
def expected_trees(tmp_path_factory) -> list[str]:
    """The document tree sha a complete compile of each version produces (layout is deterministic)."""
    root = tmp_path_factory.mktemp("expected")
    path = root / "idx"
    init_index(path)
    trees = []
    for i, text in enumerate(versions()):
        src = root / f"v{i}" / "contract.txt"
        src.parent.mkdir()
        src.write_text(text, encoding="utf-8")
        repo, settings = open_index(path)
        with repo:
            compile_path(repo, src, settings, method="fast", replace=True)  # each version is its own file
            trees.append(repo.repo.git.rev_parse(f"HEAD:{DOC}"))
    return trees


def _write_version(src, i: int) -> None:
    src.write_text(versions()[i], encoding="utf-8")


def _compile_in_process(index_path, src) -> str:
    repo, settings = open_index(index_path)
    with repo:
        return compile_path(repo, src, settings, method="fast").status


def _check_after_kill(index_path, before: dict, expected_tree: str) -> str:
    """Assert the state is old or new; roll the journal forward; return 'old' or 'new'."""
    after = head_state(index_path)
    assert after["symbolic"] == before["symbolic"], "HEAD was re-pointed"
    assert_fsck_clean(index_path)
    journal = index_path / ".git" / "hti" / JOURNAL
    if after["head"] == before["head"]:
        assert after == before, "refs changed although HEAD did not"
        outcome = "old"
    else:
        assert after["doc_tree"] == expected_tree, "HEAD holds a partial index"
        assert index_path.joinpath(".git", "hti").exists()
        outcome = "new"
    if not journal.exists():
        assert_worktree_matches_head(index_path)  # nothing pending: the files are already in line
    repo, _ = open_index(index_path)  # what any hti-git command does first: roll forward
    repo.close()
    assert not journal.exists()
    assert_worktree_matches_head(index_path)
    return outcome


@pytest.mark.slow
def test_random_sigkill_during_compile_leaves_old_or_new_state(index_path, tmp_path, expected_trees):
    """Each compile is a real `hti-git` process, as users run it (a child forked from this warm
    test process would also inherit its state: open files, other tests' Git processes, garbage
    whose finalizers run in the child), killed at a random moment of its work."""
    seed = int(os.environ.get("HTI_REL_SEED", str(random.randrange(1 << 30))))
    rng = random.Random(seed)
    src = tmp_path / "contract.txt"
    _write_version(src, 0)
    started = time.perf_counter()
    assert run_hti(index_path, "--version").returncode == 0
    startup = time.perf_counter() - started  # interpreter and imports, before any work
    started = time.perf_counter()
    first = spawn_hti(index_path, "compile", "--method", "fast", str(src))
    assert first.wait(60) == 0, first.stderr.read()
    first.stdout.close()
    first.stderr.close()
    work = max(time.perf_counter() - started - startup, 0.05)  # one whole compile's own work
    current = 0
    outcomes = {"old": 0, "new": 0}
    kills = 0
    deadline = time.perf_counter() + KILL_SECONDS
    while kills < KILLS and time.perf_counter() < deadline:
        target = (current + rng.randrange(1, 3)) % 3
        _write_version(src, target)
        before = head_state(index_path)
        proc = spawn_hti(index_path, "compile", "--method", "fast", str(src))
        time.sleep(startup + rng.uniform(0.0, 1.1) * work)  # a few runs finish before their kill
        kill_and_reap(proc)
        kills += 1
        try:
            outcome = _check_after_kill(index_path, before, expected_trees[target])
        except AssertionError as exc:  # the kill's timing is random: say which run and kill it was
            raise AssertionError(f"seed {seed}, kill {kills}: {exc}") from None
        outcomes[outcome] += 1
        if outcome == "new":
            current = target
        if kills % 4 == 0:  # the next compile finishes from whatever the kill left
            status = _compile_in_process(index_path, src)
            assert status == ("unchanged" if current == target else "committed")
            current = target
            assert head_state(index_path)["doc_tree"] == expected_trees[current]
            assert_worktree_matches_head(index_path)
    assert kills >= min(KILLS, 10), f"only {kills} kills in {KILL_SECONDS}s (seed {seed})"
    _write_version(src, (current + 1) % 3)
    done = cli(index_path, "compile", "--method", "fast", str(src))
    assert done.returncode == 0, done.stderr
    assert_fsck_clean(index_path)
    assert_worktree_matches_head(index_path)
    repo, _ = open_index(index_path)
    with repo:
        assert verify_snapshot(repo.snapshot("HEAD")).ok
    print(f"seed {seed}: {kills} kills, outcomes {outcomes}")


def test_a_commit_object_is_written_by_hti_git_itself(index_path, tmp_path, monkeypatch):
    """GitPython stores a commit through a `git hash-object --stdin --literally` child. An hti-git
    killed after starting it and before feeding it leaves it an empty stdin, and it stores the empty
    commit object `git fsck` calls bogus (2 of about 100 random kills, the blob being `commit 0\\0`).
    hti-git writes the commit in its own process, as it writes trees: no such child is started."""
    import git

    started: list[list[str]] = []
    execute = git.cmd.Git.execute

    def recording(self, command, *args, **kwargs):
        started.append([str(c) for c in command])
        return execute(self, command, *args, **kwargs)

    monkeypatch.setattr(git.cmd.Git, "execute", recording)
    src = tmp_path / "contract.txt"
    _write_version(src, 0)
    assert _compile_in_process(index_path, src) == "committed"
    assert started and not [c for c in started if "hash-object" in c]
    assert_fsck_clean(index_path)
    # what such a child does with an empty stdin
    empty = subprocess.run(["git", "-C", str(index_path), "hash-object", "-t", "commit", "-w", "--stdin", "--literally"],
                           input=b"", capture_output=True, check=True).stdout.decode().strip()
    assert empty == "dcf5b16e76cce7425d0beaef62d79a7d10fce1f5"  # sha1 of "commit 0\0": the bogus object fsck named


@pytest.mark.parametrize("point", ["before-ref-move", "after-ref-move", "mid-sync"])
def test_kill_at_fault_point_then_recover(index_path, tmp_path, expected_trees, point):
    src = tmp_path / "contract.txt"
    _write_version(src, 0)
    assert _compile_in_process(index_path, src) == "committed"
    _write_version(src, 1)
    before = head_state(index_path)
    proc = run_hti(index_path, "compile", "--method", "fast", str(src), env={"HTI_FAULT": f"{point}:kill"})
    assert proc.returncode == -9, proc.stderr
    after = head_state(index_path)
    journal = index_path / ".git" / "hti" / JOURNAL
    assert journal.exists()
    assert_fsck_clean(index_path)
    if point == "before-ref-move":
        assert after == before
        assert_worktree_matches_head(index_path)  # the journal is for a ref that never moved
    else:
        assert after["doc_tree"] == expected_trees[1] and after["refs"] != before["refs"]
    # Any command rolls the journal forward, even a read-only one in another process.
    listed = run_hti(index_path, "ls")
    assert listed.returncode == 0, listed.stderr
    assert not journal.exists()
    assert_worktree_matches_head(index_path)
    again = cli(index_path, "compile", "--method", "fast", str(src))
    assert again.returncode == 0, again.stderr
    assert ("unchanged" in again.stdout) == (point != "before-ref-move")
    assert head_state(index_path)["doc_tree"] == expected_trees[1]
    assert_worktree_matches_head(index_path)
    assert_fsck_clean(index_path)


def test_standard_compile_killed_during_extraction_resumes_from_the_cache(index_path, monkeypatch):
    """A standard compile killed mid-way leaves HEAD alone; the rerun answers finished calls from
    the response cache (.git/hti/cache.sqlite) and completes."""
    from rel_support import CONTRACT, stub_handler, wait_group_empty

    from tests.support.openai_stub import OpenAIStub

    with OpenAIStub(stub_handler, latency=0.02) as stub:
        env = {"OPENAI_BASE_URL": stub.base_url, "HTI_MODEL": "stub-model", "OPENAI_API_KEY": "sk-test"}
        before = head_state(index_path)
        proc = spawn_hti(index_path, "compile", "--method", "standard", str(CONTRACT), env=env)
        deadline = time.monotonic() + 30
        while len([r for r in stub.requests if r.status == 200]) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        served = len([r for r in stub.requests if r.status == 200])
        assert served >= 4, proc.stderr.read() if proc.poll() is not None else "no progress"
        os.kill(proc.pid, 9)
        proc.wait(10)
        proc.stdout.close()
        proc.stderr.close()
        wait_group_empty(proc.pid)
        assert head_state(index_path) == before
        assert_fsck_clean(index_path)
        assert_worktree_matches_head(index_path)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        done = cli(index_path, "compile", "--method", "standard", "--json", str(CONTRACT))
        assert done.returncode == 0, done.stderr
        usage = json.loads(done.stdout)[0]["usage"]
        assert usage["cached_calls"] >= 1, usage  # calls answered before the kill were not paid twice
    assert_worktree_matches_head(index_path)
    assert_fsck_clean(index_path)
    repo, _ = open_index(index_path)
    with repo:
        assert verify_snapshot(repo.snapshot("HEAD")).ok
