"""Soak test (not in CI): compile/kill/resume cycles with asks running alongside (python bench/soak.py).

One index repository holds a committed, reviewed note (notes/REVIEW.md), a modified tracked file
and an untracked file outside the index folder, and a compiled contract. Then, `--cycles` times:
write one of three versions of the contract, start `hti-git compile` as a real process, SIGKILL it
at a random moment (only the hti-git process, as `kill -9` would; the git commands it started run
to their end), check the repository, then run the compile again to completion ("resume") and check
again. Meanwhile `--ask-workers` threads run `hti-git ask --json` processes in a loop until
`--asks` have run.

After every kill and every resume:
- corrupted: `git fsck --strict` not clean, HEAD re-pointed, HEAD's document tree neither the old
  one nor a complete compile of the version being written, or (after any hti-git command has opened
  the repository) index and working tree differ from HEAD;
- data lost: a commit that was on the branch before is no longer reachable from it, the reviewed
  note or the dirty/untracked files outside the index changed, or a completed resume does not hold
  exactly the version compiled.
An ask fails when it exits non-zero, prints something other than JSON, or answers from a commit
that was never on the branch.

Prints: cycles run, repositories corrupted (must be 0), data lost (must be 0), asks failed.
Exit status 1 if any of the three is non-zero.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "tests" / "fixtures" / "slingerbaginc-05-27-2020-ex-10-7-consulting-agreement.txt"
DOC = "contract"
ENV = {
    "GIT_AUTHOR_NAME": "soak", "GIT_AUTHOR_EMAIL": "soak@example.com",
    "GIT_COMMITTER_NAME": "soak", "GIT_COMMITTER_EMAIL": "soak@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}
for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTI_MODEL", "HTI_METHOD", "HTI_FAULT"):
    os.environ.pop(name, None)
os.environ.update(ENV)

QUESTIONS = ["Which state's law governs this agreement?", "Who are the parties?",
             "How can the agreement be terminated?", "What is the consulting fee?",
             "What happens to confidential information?"]


def git(repo: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout


def hti(*args: str) -> list[str]:
    return [sys.executable, "-m", "hti_git", *args]


def versions() -> list[str]:
    base = CONTRACT.read_text(encoding="utf-8")
    return [base, base.replace("Consultant", "Advisor", 20),
            base + "\n\n12. ADDITIONAL TERMS\n\nThe Advisor shall keep all records for seven (7) years.\n"]


def live_in_group(pgid: int) -> bool:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path("/proc", entry, "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


def fsck_clean(repo: Path) -> bool:
    proc = subprocess.run(["git", "-C", str(repo), "fsck", "--strict", "--no-dangling", "--no-progress"],
                          capture_output=True, text=True)
    return proc.returncode == 0 and not proc.stdout.strip()


def worktree_matches_head(repo: Path, dirty: set[str]) -> bool:
    """Index and files equal HEAD, apart from the deliberately dirty files outside the index."""
    lines = git(repo, "status", "--porcelain", "--untracked-files=all").splitlines()
    return {line[3:] for line in lines} <= dirty


class Soak:
    def __init__(self, workdir: Path, seed: int):
        self.repo = workdir / "idx"
        self.src = workdir / "contract.txt"
        self.rng = random.Random(seed)
        self.versions = versions()
        self.expected: list[str] = []
        self.history: set[str] = set()  # every commit ever on main
        self.history_lock = threading.Lock()
        self.corrupted = 0
        self.lost = 0
        self.problems: list[str] = []
        self.asks = 0
        self.asks_failed = 0
        self.ask_lock = threading.Lock()
        self.outside: dict[str, bytes] = {}
        self.dirty = {"README.md", "scratch.txt"}

    def problem(self, kind: str, text: str) -> None:
        if kind == "corrupted":
            self.corrupted += 1
        else:
            self.lost += 1
        self.problems.append(f"{kind}: {text}")
        print(f"  !! {kind}: {text}", flush=True)

    def setup(self) -> None:
        # The document tree of a complete compile of each version (layout is deterministic).
        scratch = self.repo.parent / "expected"
        subprocess.run(hti("init", str(scratch)), check=True, capture_output=True)
        for text in self.versions:
            self.src.write_text(text, encoding="utf-8")
            subprocess.run(hti("compile", "--method", "fast", str(self.src)), cwd=scratch, check=True,
                           capture_output=True)
            self.expected.append(git(scratch, "rev-parse", f"HEAD:{DOC}").strip())
        shutil.rmtree(scratch)
        subprocess.run(hti("init", str(self.repo)), check=True, capture_output=True)
        (self.repo / "notes").mkdir()
        (self.repo / "notes" / "REVIEW.md").write_text("Reviewed clause 7.10 with counsel.\n")
        (self.repo / "README.md").write_text("Contracts index.\n")
        git(self.repo, "add", "notes/REVIEW.md", "README.md")
        git(self.repo, "commit", "-q", "-m", "Reviewed notes")
        (self.repo / "README.md").write_text("Contracts index (edited, not committed).\n")
        (self.repo / "scratch.txt").write_text("untracked scratch\n")
        for rel in ("notes/REVIEW.md", "README.md", "scratch.txt"):
            self.outside[rel] = (self.repo / rel).read_bytes()
        self.src.write_text(self.versions[0], encoding="utf-8")
        subprocess.run(hti("compile", "--method", "fast", str(self.src)), cwd=self.repo, check=True,
                       capture_output=True)
        self.current = 0
        self.remember()

    def remember(self) -> None:
        with self.history_lock:
            self.history.update(git(self.repo, "rev-list", "HEAD").split())

    def state(self) -> tuple[str, str, str]:
        head = git(self.repo, "rev-parse", "HEAD").strip()
        tree = git(self.repo, "rev-parse", "-q", "--verify", f"HEAD:{DOC}", check=False).strip()
        return git(self.repo, "symbolic-ref", "-q", "HEAD", check=False).strip(), head, tree

    def check(self, before: tuple[str, str, str], target: int, label: str) -> None:
        symbolic, head, tree = self.state()
        if not fsck_clean(self.repo):
            self.problem("corrupted", f"{label}: git fsck not clean")
        if symbolic != before[0]:
            self.problem("corrupted", f"{label}: HEAD re-pointed to {symbolic!r}")
        if head == before[1]:
            if tree != before[2]:
                self.problem("corrupted", f"{label}: tree changed without a commit")
        elif tree != self.expected[target]:
            self.problem("corrupted", f"{label}: HEAD holds a tree that is neither old nor new")
        else:
            self.current = target
        reachable = set(git(self.repo, "rev-list", "HEAD").split())
        with self.history_lock:
            missing = self.history - reachable
        if missing:
            self.problem("lost", f"{label}: {len(missing)} earlier commit(s) no longer on the branch")
        self.remember()
        # Any hti-git command rolls a dead compile's journal forward; `ls` is the cheapest.
        subprocess.run(hti("ls"), cwd=self.repo, capture_output=True)
        if not worktree_matches_head(self.repo, self.dirty):
            self.problem("corrupted", f"{label}: index/working tree differ from HEAD after recovery")
        for rel, data in self.outside.items():
            path = self.repo / rel
            if not path.exists() or path.read_bytes() != data:
                self.problem("lost", f"{label}: {rel} outside the index was changed")

    def cycle(self, n: int, estimate: float) -> None:
        target = (self.current + self.rng.randrange(1, 3)) % 3
        self.src.write_text(self.versions[target], encoding="utf-8")
        before = self.state()
        proc = subprocess.Popen(hti("compile", "--method", "fast", str(self.src)), cwd=self.repo,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(self.rng.uniform(0.0, 1.1) * estimate)
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        while live_in_group(proc.pid):
            time.sleep(0.005)
        self.check(before, target, f"cycle {n} kill")
        before = self.state()
        done = subprocess.run(hti("compile", "--method", "fast", str(self.src)), cwd=self.repo,
                              capture_output=True, text=True)
        if done.returncode != 0:
            self.problem("corrupted", f"cycle {n} resume failed: {done.stderr.strip()[:200]}")
            return
        self.check(before, target, f"cycle {n} resume")
        if self.state()[2] != self.expected[target]:
            self.problem("lost", f"cycle {n}: the resumed compile does not hold the version compiled")

    def asker(self, total: int, stop: threading.Event) -> None:
        rng = random.Random(threading.get_ident())
        while not stop.is_set():
            with self.ask_lock:
                if self.asks >= total:
                    return
                self.asks += 1
            proc = subprocess.run(hti("ask", "--json", rng.choice(QUESTIONS)), cwd=self.repo,
                                  capture_output=True, text=True)
            ok = proc.returncode == 0
            if ok:
                try:
                    commit = json.loads(proc.stdout).get("commit")
                except ValueError:
                    ok = False
                else:
                    with self.history_lock:
                        known = commit in self.history
                    if not known:  # a commit made a moment ago: look again once the branch is read
                        self.remember()
                        with self.history_lock:
                            known = commit in self.history
                    ok = known
            if not ok:
                with self.ask_lock:
                    self.asks_failed += 1
                print(f"  !! ask failed (exit {proc.returncode}): {proc.stderr.strip()[:200]}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--asks", type=int, default=1000)
    parser.add_argument("--ask-workers", type=int, default=3)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hti-soak-") as tmp:
        soak = Soak(Path(tmp), seed)
        soak.setup()
        t = time.perf_counter()
        subprocess.run(hti("compile", "--method", "fast", str(soak.src), "--doc", "timing"), cwd=soak.repo,
                       capture_output=True)
        estimate = time.perf_counter() - t
        git(soak.repo, "rm", "-q", "-r", "timing")
        git(soak.repo, "commit", "-q", "-m", "drop timing doc")
        soak.remember()
        stop = threading.Event()
        workers = [threading.Thread(target=soak.asker, args=(args.asks, stop)) for _ in range(args.ask_workers)]
        for w in workers:
            w.start()
        cycles = 0
        for n in range(1, args.cycles + 1):
            soak.cycle(n, estimate)
            cycles = n
            if n % 20 == 0:
                print(f"{n} cycles, {soak.asks} asks, {time.perf_counter() - started:.0f}s", flush=True)
        for w in workers:  # let the asks finish their count (still against a live repository)
            w.join()
        stop.set()
    print(f"seed: {seed}")
    print(f"cycles run: {cycles}")
    print(f"repositories corrupted: {soak.corrupted}")
    print(f"data lost: {soak.lost}")
    print(f"asks run: {soak.asks}")
    print(f"asks failed: {soak.asks_failed}")
    print(f"time: {time.perf_counter() - started:.0f}s")
    return 1 if soak.corrupted or soak.lost or soak.asks_failed else 0


if __name__ == "__main__":
    sys.exit(main())
