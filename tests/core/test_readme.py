"""The README's console blocks are true: each `$ hti-git ...` runs, and prints what the block shows.

A block is a transcript: commands run in order in one temporary directory (with `examples/` and
`bench/` beside it, as in a checkout), `cd` included. In the expected output a line `...` stands for any number of
lines, `...` or `…` inside a line for any text; commit shas, timings and the temporary path vary.
Commands whose arguments are placeholders ("...") are not run. Blocks that need a model endpoint
(`--model`, `--judge-model`) are left out; the stub-model transcript is covered by the standard
compile's own tests.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "examples" / "eval" / "README.md"]
NEEDS_MODEL = ("--model", "--judge-model")


def console_blocks(path: Path) -> list[str]:
    return re.findall(r"^```console\n(.*?)^```", path.read_text(encoding="utf-8"), flags=re.S | re.M)


def transcript(block: str) -> list[tuple[str, list[str]]]:
    """[(command line, expected output lines)] of one console block."""
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line.rstrip())
    for _, out in steps:
        while out and not out[-1]:
            out.pop()
    return steps


def _line_pattern(expected: str, tmp: Path) -> re.Pattern:
    parts = re.split(r"(\.\.\.|…|/tmp/[\w.-]+|\b[0-9a-f]{10}\b|\b[0-9a-f]{12}\b|\b\d+\.\d\ds\b)", expected)
    out = []
    for part in parts:
        if part in ("...", "…"):
            out.append(".*")
        elif part.startswith("/tmp/"):
            out.append(re.escape(str(tmp)) + "/" + re.escape(part.split("/", 2)[2]))
        elif re.fullmatch(r"[0-9a-f]{10}|[0-9a-f]{12}", part or "x"):
            out.append(f"[0-9a-f]{{{len(part)}}}")
        elif re.fullmatch(r"\d+\.\d\ds", part or "x"):
            out.append(r"\d+\.\d\ds")
        else:
            out.append(re.escape(part))
    return re.compile("".join(out))


def matches(expected: list[str], actual: list[str], tmp: Path) -> bool:
    """True when `actual` fits `expected`, a line `...` matching any run of lines."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(matches(rest, actual[i:], tmp) for i in range(len(actual) + 1))
    return bool(actual) and bool(_line_pattern(head, tmp).fullmatch(actual[0])) and matches(rest, actual[1:], tmp)


def _runnable(block: str) -> bool:
    return "$ hti-git" in block and not any(flag in block for flag in NEEDS_MODEL)


BLOCKS = [(path, i, block) for path in DOCS for i, block in enumerate(console_blocks(path)) if _runnable(block)]


def test_the_workflow_and_the_offline_eval_are_checked():
    checked = {(p.relative_to(ROOT).as_posix(), i) for p, i, _ in BLOCKS}
    assert ("README.md", 0) in checked and ("examples/eval/README.md", 0) in checked


@pytest.mark.parametrize("path,index,block", BLOCKS, ids=[f"{p.relative_to(ROOT)}#{i}" for p, i, _ in BLOCKS])
def test_console_block_is_true(tmp_path, path, index, block):
    work = tmp_path / "tmp"
    work.mkdir()
    (work / "examples").symlink_to(ROOT / "examples")
    (work / "bench").symlink_to(ROOT / "bench")  # the filings of bench/data
    cwd = work
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HTI_MODEL", "HTI_METHOD"))}
    env["PYTHONIOENCODING"] = "utf-8"
    ran = 0
    for command, expected in transcript(block):
        if '"..."' in command:
            continue  # a placeholder question, not a command to run
        output: list[str] = []
        for part in command.split("&&"):
            args = shlex.split(part, comments=True)
            if args[0] == "cd":
                cwd = (cwd / args[1]).resolve()
                continue
            assert args[0] == "hti-git", command
            proc = subprocess.run([sys.executable, "-m", "hti_git", *args[1:]], cwd=cwd, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
            assert proc.returncode == 0, (command, proc.stdout)
            output += [line.rstrip() for line in proc.stdout.splitlines()]
            ran += 1
        while output and not output[-1]:
            output.pop()
        assert matches(expected, output, work), (
            f"{path.name}: `{command}` printed\n" + "\n".join(output) + "\n\nbut the block shows\n" + "\n".join(expected))
    assert ran


def test_every_eval_example_names_a_question_file_that_exists():
    named = []
    for path in DOCS:
        for block in re.findall(r"^```(?:console|bash)\n(.*?)^```", path.read_text(encoding="utf-8"), flags=re.S | re.M):
            for line in block.splitlines():
                args = shlex.split(line.removeprefix("$ "), comments=True) if "hti-git eval" in line else []
                if args[:2] == ["hti-git", "eval"]:
                    named.append(args[2])
    assert len(named) >= 5
    # every example runs in an index folder beside the checkout's examples/, as the transcripts do
    assert [n for n in named if not (ROOT / "idx" / n).resolve().is_file()] == []
