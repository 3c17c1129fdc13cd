"""Concurrency: compiles queue on the lock, asks read the last commit, a dead holder frees the lock."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
from rel_support import (
    CONTRACT,
    assert_fsck_clean,
    assert_worktree_matches_head,
    cli,
    git,
    run_hti,
    spawn_hti,
    wait_for_line,
)

from hti_git.errors import LockedError
from hti_git.store import IndexRepo


@pytest.fixture
def compiled(index_path):
    done = cli(index_path, "compile", "--method", "fast", "--doc", "first", str(CONTRACT))
    assert done.returncode == 0, done.stderr
    return index_path


def _finish(proc: subprocess.Popen, timeout: float = 30) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def test_second_compile_waits_for_the_first_then_commits_on_top(compiled):
    holder = spawn_hti(compiled, "compile", "--method", "fast", "--doc", "second", str(CONTRACT),
                       env={"HTI_FAULT": "before-ref-move:sleep=1.5"})
    wait_for_line(holder, "hti-fault: before-ref-move")
    waiter = spawn_hti(compiled, "compile", "--method", "fast", "--doc", "third", str(CONTRACT))
    code, _, err = _finish(holder)
    assert code == 0, err
    code, out, err = _finish(waiter)
    assert code == 0, err
    assert "committed" in out
    subjects = git(compiled, "log", "--format=%s", "-3").splitlines()
    assert subjects[:2] == ["Compile third (fast)", "Compile second (fast)"]
    assert sorted(p.name for p in compiled.iterdir() if not p.name.startswith(".")) == [
        "catalog", "first", "hti.yaml", "second", "templates", "third"]
    # the waiting compile's catalogue was built on the commit it waited for: all three are listed
    listed = sorted(json.loads(line).get("doc") for shard in (compiled / "catalog").iterdir()
                    for line in shard.read_text().splitlines()[1:])
    assert listed == ["first", "second", "third"]
    assert_worktree_matches_head(compiled)
    assert_fsck_clean(compiled)


def test_a_writer_that_cannot_get_the_lock_fails_with_one_line(compiled):
    holder = spawn_hti(compiled, "compile", "--method", "fast", "--doc", "second", str(CONTRACT),
                       env={"HTI_FAULT": "before-ref-move:sleep=3"})
    wait_for_line(holder, "hti-fault: before-ref-move")
    repo = IndexRepo(compiled)
    started = time.perf_counter()
    with pytest.raises(LockedError) as caught, repo.lock(timeout=0.3):
        pass
    assert time.perf_counter() - started < 2
    message = str(caught.value)
    assert "\n" not in message and "another hti-git process is writing" in message
    repo.close()
    holder.send_signal(signal.SIGKILL)  # the lock goes with it
    _finish(holder)
    with IndexRepo(compiled) as again, again.lock(timeout=2):
        pass


@pytest.mark.parametrize("point, sees_new", [("before-ref-move", False), ("after-ref-move", True)])
def test_ask_during_a_compile_answers_from_the_last_commit(compiled, tmp_path, point, sees_new):
    before = git(compiled, "rev-parse", "HEAD").strip()
    changed = tmp_path / "first.txt"
    changed.write_text(CONTRACT.read_text().replace("New York", "Delaware"))
    holder = spawn_hti(compiled, "compile", "--method", "fast", "--doc", "first", "--replace", str(changed),
                       env={"HTI_FAULT": f"{point}:sleep=2.5"})
    wait_for_line(holder, f"hti-fault: {point}")
    asked = run_hti(compiled, "ask", "--json", "Which state's law governs this agreement?")
    assert holder.poll() is None  # the ask did not wait for the writer
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    head = git(compiled, "rev-parse", "HEAD").strip()
    assert answer["commit"] == (head if sees_new else before)
    assert ("Delaware" if sees_new else "New York") in answer["answer"]
    code, _, err = _finish(holder)
    assert code == 0, err
    assert_worktree_matches_head(compiled)


LOCK_AND_HANG = """
import sys, time
from hti_git.store import IndexRepo
repo = IndexRepo(sys.argv[1])
with repo.lock():
    print("locked", flush=True)
    time.sleep(60)
"""


def test_lock_of_a_dead_process_is_recovered(compiled):
    proc = subprocess.Popen([sys.executable, "-c", LOCK_AND_HANG, str(compiled)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    with IndexRepo(compiled) as repo, pytest.raises(LockedError), repo.lock(timeout=0.1):
        pass
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    proc.stdout.close()
    assert (compiled / ".git" / "hti" / "lock").exists()  # the file stays; the kernel dropped the lock
    started = time.perf_counter()
    with IndexRepo(compiled) as repo, repo.lock(timeout=1):
        pass
    assert time.perf_counter() - started < 0.5
    done = cli(compiled, "compile", "--method", "fast", "--doc", "second", str(CONTRACT))
    assert done.returncode == 0, done.stderr
