"""A corpus in one repository: N documents, per-command times and memory (python bench/corpus.py N).

Builds N distinct documents from the shared CUAD contracts (each a copy of one of the .txt
contracts with a line naming the copy appended), compiles them with `--method fast` in one batch
(`-j 2`, one commit per document, as a user would), then times each command as a whole process
(`python -m hti_git ...`, median of 3 runs; full verify once) with its peak resident memory, next to
plain Git over the same repository in the same run:

    ls                   vs  git ls-tree HEAD + git cat-file of every root page (what ls read before)
    ask (all documents)  vs  git cat-file of the catalogue's shards (catalog/*.jsonl)
    ask --doc            vs  git cat-file of that document's root page
    show DOC             vs  git ls-tree -r HEAD DOC
    verify --since       vs  git diff-tree of the same revisions    (after recompiling one changed document)
    verify (full)        vs  git ls-tree -r HEAD | git cat-file --batch (reading every page once)

and the size of .git against its fully packed size (`git repack -a -d -f` at the end: every object
in one pack with deltas searched afresh; plain `git gc` keeps objects stored whole whole). Targets from issue 18:
ls < 1 s, ask across all < 2 s, ask --doc < 1 s, show DOC < 1 s, verify --since < 2 s, full verify of
10,000 documents < 5 minutes on 2 cores, .git within 2x its packed size.

    python bench/corpus.py 500                  # builds in a temporary folder, removed afterwards
    python bench/corpus.py 500 --keep /tmp/c500 # keep (or reuse, when it exists) the repository
    python bench/corpus.py 10000 --batch 500    # 20 compiles of 500 documents, one commit each (--one-commit)
    python bench/corpus.py 10000 --batch 1000 --executor ray   # built in Ray workers (both cores)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchlib import ROOT, bench_identity, require_cuad

QUESTION = "Which state's law governs this agreement?"


CPU: dict[str, float] = {}  # command name -> CPU seconds of its last run (its own and its reaped children's)


# Each measured command runs under this small launcher: a process forked from this benchmark's own
# (large) process reports this process's resident size as its peak until it execs, so the command is
# forked from the launcher instead, and the launcher reports its rusage on stderr's last line.
LAUNCHER = """import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
sys.stderr.write("\\n@rusage %d %.3f\\n" % (usage.ru_maxrss, usage.ru_utime + usage.ru_stime))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def timed(cmd: list[str], cwd: Path, repeat: int = 3, stdin: bytes | None = None, ok_codes=(0,)) -> tuple[float, float, bytes]:
    """Median seconds and peak RSS (MB) over `repeat` runs, measured with wait4 in a launcher."""
    times, peaks, out = [], [], b""
    for _ in range(repeat):
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, *map(str, cmd)], cwd=cwd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        feeder = None
        if stdin is not None:  # fed from a thread: the output would fill its pipe while we write
            feeder = threading.Thread(target=_feed, args=(proc.stdin, stdin))
            feeder.start()
        drained: list[bytes] = []
        drain = threading.Thread(target=_drain, args=(proc.stderr, drained))
        drain.start()
        out = proc.stdout.read()
        drain.join()
        if feeder is not None:
            feeder.join()
        err, _, report = drained[0].rpartition(b"\n@rusage ")
        code = proc.wait()
        times.append(time.perf_counter() - started)
        if code not in ok_codes or not report:
            sys.exit(f"{' '.join(map(str, cmd[:6]))} failed ({code}): {err.decode(errors='replace')[-400:]}")
        maxrss, cpu = report.split()
        peaks.append(int(maxrss) / 1024)  # KB on Linux; includes the command's reaped children
        CPU[" ".join(map(str, cmd))] = float(cpu)
    return statistics.median(times), max(peaks), out


def _feed(pipe, data: bytes) -> None:
    try:
        pipe.write(data)
    finally:
        pipe.close()


def _drain(pipe, into: list[bytes]) -> None:
    into.append(pipe.read())


def hti(*args: str) -> list[str]:
    return [sys.executable, "-m", "hti_git", *args]


def build_corpus(n: int, folder: Path, cuad: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    sources = sorted((cuad / "contracts").glob("*.txt"))
    paths = []
    for i in range(n):
        src = sources[i % len(sources)]
        path = folder / f"{src.stem[:40]}-{i:05d}.txt"
        if not path.exists():
            path.write_text(src.read_text() + f"\n\nCorpus copy {i:05d} of {src.stem}.\n")
        paths.append(path)
    return paths


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, help="documents")
    parser.add_argument("--keep", type=Path, default=None, help="build (or reuse) the repository here")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="compile -j (default 2)")
    parser.add_argument("--build-only", action="store_true", help="build (with --keep) and stop; time later")
    parser.add_argument("--executor", choices=["local", "ray"], default="local",
                        help="compile --executor (ray: documents built in Ray workers, one per core)")
    parser.add_argument("--batch", type=int, default=0,
                        help="compile in batches of this many documents, one commit each (--one-commit); "
                             "default: one batch, one commit per document")
    args = parser.parse_args()
    cuad = require_cuad()
    bench_identity()
    env_path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    os.environ["PYTHONPATH"] = env_path
    work = args.keep or Path(tempfile.mkdtemp(prefix="hti-corpus-"))
    docs_dir, idx = work / "docs", work / "idx"
    rows: list[tuple[str, float, float, str, float]] = []
    try:
        paths = build_corpus(args.n, docs_dir, cuad)
        if not (idx / ".git").exists() or args.build_only:  # --build-only resumes a build that stopped
            if not (idx / ".git").exists():
                subprocess.run(hti("init", str(idx)), check=True, capture_output=True)
            started = time.perf_counter()
            compiled = 0
            batch = args.batch or len(paths)
            for first in range(0, len(paths), batch):
                part = [str(p) for p in paths[first:first + batch]]
                one = ["--one-commit"] if args.batch else []
                proc = subprocess.run(hti("-C", str(idx), "compile", *part, "--method", "fast", "-j", str(args.jobs),
                                          *one, "--executor", args.executor, "--json"), capture_output=True)
                if proc.returncode != 0:
                    sys.exit(f"compile failed: {proc.stderr.decode(errors='replace')[-600:]}")
                compiled += sum(1 for r in json.loads(proc.stdout) if r.get("status") in ("committed", "unchanged"))
                elapsed = time.perf_counter() - started
                print(f"  {compiled:,} documents compiled, {elapsed:.0f} s", flush=True)
            compile_s = time.perf_counter() - started
            how = f"--one-commit batches of {args.batch}" if args.batch else "one commit each"
            how += ", built on a local Ray instance" if args.executor == "ray" else ""
            print(f"compiled {compiled} documents in {compile_s:.0f} s "
                  f"({compile_s / max(1, compiled):.2f} s a document at -j {args.jobs}, {how})", flush=True)
        if args.build_only:
            return
        git_dir = idx / ".git"
        files = int(subprocess.run(["git", "-C", str(idx), "ls-tree", "-r", "HEAD", "--name-only"], capture_output=True,
                                   text=True, check=True).stdout.count("\n"))
        docs = json.loads(subprocess.run(hti("-C", str(idx), "ls", "--json"), capture_output=True, check=True).stdout)
        doc = docs[len(docs) // 2]["doc"]
        print(f"{len(docs)} documents, {files:,} files at HEAD; .git {du(git_dir) / 1e6:.0f} MB; timing (median of 3) ...")

        roots = "".join(f"HEAD:{d['doc']}/index.md\n" for d in docs).encode()
        t, m, _ = timed(hti("-C", str(idx), "ls"), idx)
        b1, _, _ = timed(["git", "ls-tree", "HEAD"], idx)
        b2, _, _ = timed(["git", "cat-file", "--batch"], idx, stdin=roots)
        rows.append(("ls", t, m, "git ls-tree HEAD + cat-file of every root page", b1 + b2))
        t, m, _ = timed(hti("-C", str(idx), "ask", "--method", "fast", QUESTION), idx)
        shards = subprocess.run(["git", "ls-tree", "--name-only", "HEAD", "catalog/"], cwd=idx, capture_output=True,
                                text=True, check=True).stdout.split()
        b, _, _ = timed(["git", "cat-file", "--batch"], idx, stdin="".join(f"HEAD:{s}\n" for s in shards).encode())
        rows.append(("ask (all documents)", t, m, "git cat-file of the catalogue's shards", b))
        t, m, _ = timed(hti("-C", str(idx), "ask", "--method", "fast", "--doc", doc, QUESTION), idx)
        b, _, _ = timed(["git", "cat-file", "-p", f"HEAD:{doc}/index.md"], idx)
        rows.append(("ask --doc", t, m, "git cat-file of its root page", b))
        t, m, _ = timed(hti("-C", str(idx), "show", doc), idx)
        b, _, _ = timed(["git", "ls-tree", "-r", "HEAD", doc], idx)
        rows.append(("show DOC", t, m, "git ls-tree -r HEAD DOC", b))
        t, m, _ = timed(hti("-C", str(idx), "ask", "--doc", doc + "x", QUESTION), idx, ok_codes=(2,))
        rows.append(("ask --doc (unknown name)", t, m, "-", 0.0))

        # one changed document, recompiled, then verified alone
        changed = next(p for p in paths if p.stem.endswith(doc[-5:]))
        if "amended" not in changed.read_text()[-200:]:
            changed.write_text(changed.read_text() + "\nThis copy was amended.\n")
        started = time.perf_counter()
        subprocess.run(hti("-C", str(idx), "compile", str(changed), "--method", "fast", "--doc", doc), check=True,
                       capture_output=True)
        recompile = time.perf_counter() - started
        t, m, _ = timed(hti("-C", str(idx), "verify", "--since", "HEAD~1"), idx)
        b, _, _ = timed(["git", "diff-tree", "-r", "--name-only", "HEAD~1", "HEAD"], idx)
        rows.append(("verify --since HEAD~1 (1 document)", t, m, "git diff-tree HEAD~1 HEAD", b))
        t, m, out = timed(hti("-C", str(idx), "verify", "-j", "2"), idx, repeat=1)
        verify_cpu = CPU[" ".join(map(str, hti("-C", str(idx), "verify", "-j", "2")))]
        listing = subprocess.run(["git", "ls-tree", "-r", "HEAD"], cwd=idx, capture_output=True, check=True).stdout
        objects = b"".join(line.split()[2] + b"\n" for line in listing.splitlines())
        b, _, _ = timed(["git", "cat-file", "--batch"], idx, repeat=1, stdin=objects)
        rows.append(("verify (full, -j 2)", t, m, "git cat-file --batch of every file", b))
        verify_line = out.decode().strip().splitlines()[-1]

        loose = du(git_dir / "objects")
        counts = subprocess.run(["git", "count-objects", "-v"], cwd=idx, capture_output=True, text=True, check=True).stdout
        started = time.perf_counter()
        subprocess.run(["git", "repack", "-a", "-d", "-f", "-q"], cwd=idx, check=True)
        repack_s = time.perf_counter() - started
        packed = du(git_dir / "objects")

        print(f"\nN = {len(docs)} documents ({files:,} files), recompile of one changed document {recompile:.1f} s")
        print(f"verify: {verify_line}")
        print(f"full verify: {verify_cpu:.0f} s of CPU (its process, its workers and their git processes); "
              f"load average {os.getloadavg()[0]:.1f} at the end\n")
        print("| command | time | peak RSS | plain Git, same repository | time |")
        print("|---|---:|---:|---|---:|")
        for name, t, m, base, b in rows:
            print(f"| `{name}` | {t:.2f} s | {m:.0f} MB | {base} | {b:.2f} s |" if base != "-" else
                  f"| `{name}` | {t:.2f} s | {m:.0f} MB | - | - |")
        count = dict(line.split(": ") for line in counts.splitlines())
        print(f"\n.git objects: {loose / 1e6:.0f} MB ({count['count']} loose objects, {count['packs']} packs) before "
              f"`git repack -a -d -f`; {packed / 1e6:.0f} MB fully packed ({loose / max(packed, 1):.2f}x; "
              f"the repack took {repack_s:.0f} s)")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
