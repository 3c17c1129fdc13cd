"""Run `hti-git eval` offline on real filings: each document of `bench/data` with its questions.

A long filing is the other kind of document users bring (Parts, Items, subheadings and many tables).
Compiles each filing (`<name>.md`, `.pdf` or `.txt` beside `<name>.qa.jsonl`) with `fast` into a fresh
index repository and evaluates the index against the chunks baseline with no model: accuracy (the
deterministic match), evidence recall, text read per question, and "found" on the questions the
filing does not answer. Prints each question's outcome for both systems, so a change to `fast` shows
where it wins and loses.

    python bench/eval_filing.py                      # every filing in bench/data
    python bench/eval_filing.py apple-10-q-2024      # one (or several) by name
    python bench/eval_filing.py --pdf                # their PDF renderings (bench/data/render_pdf.py)
    python bench/eval_filing.py path/to/filing.pdf path/to/questions.jsonl

The questions are an analyst's, written in everyday words (bench/data/README.md says how they were
made and which filings were held out from tuning).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from benchlib import ROOT, bench_identity

from hti_git.compile.pipeline import compile_path
from hti_git.config import Settings
from hti_git.eval.harness import EvalOptions, run_eval
from hti_git.eval.questions import load_questions
from hti_git.eval.report import render_table
from hti_git.store import IndexRepo
from hti_git.workspace import init_index

DATA = ROOT / "bench" / "data"
SUFFIXES = (".md", ".txt", ".pdf")


def filings(names: list[str], pdf: bool = False) -> list[tuple[Path, Path]]:
    """(document, questions) pairs: the named ones of bench/data, two paths, or all of bench/data; with
    `pdf`, each filing's PDF rendering."""
    if len(names) == 2 and all(Path(n).is_file() for n in names):
        return [(Path(names[0]), Path(names[1]))]
    pairs = []
    for questions in sorted(DATA.glob("*.qa.jsonl")):
        name = questions.name.removesuffix(".qa.jsonl")
        if names and name not in names:
            continue
        doc = next((DATA / f"{name}{s}" for s in ((".pdf",) if pdf else SUFFIXES) if (DATA / f"{name}{s}").is_file()),
                   None)
        if doc is None:
            raise SystemExit(f"no document for {questions.name} in {DATA}")
        pairs.append((doc, questions))
    if names and len(pairs) != len(names):
        raise SystemExit(f"unknown filing among {names}; known: "
                         + ", ".join(q.name.removesuffix('.qa.jsonl') for q in DATA.glob('*.qa.jsonl')))
    return pairs


def main() -> int:
    bench_identity()
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTI_MODEL"):
        os.environ.pop(name, None)  # offline by design
    args = [a for a in sys.argv[1:] if a != "--pdf"]
    for n, (filing, questions_path) in enumerate(filings(args, pdf="--pdf" in sys.argv)):
        if n:
            print()
        evaluate(filing, questions_path)
    return 0


def evaluate(filing: Path, questions_path: Path) -> None:
    questions = load_questions(questions_path)
    with tempfile.TemporaryDirectory() as tmp:
        init_index(Path(tmp) / "idx")
        with IndexRepo(Path(tmp) / "idx") as repo:
            result = compile_path(repo, filing, Settings(), method="fast")
            run = run_eval(repo, Settings(), questions, EvalOptions(baselines=("chunks",), use_cache=False),
                           source=questions_path.name)
    print(f"== {filing.name}: {filing.stat().st_size:,} bytes, "
          f"{getattr(result, 'pages', '?')} pages in the index")
    print(render_table(run))
    absent = {q.id for q in questions if not q.evidence}
    print()
    for s in run.systems:
        rows = [r for r in run.results if r["system"] == s["system"]]
        found_absent = sum(bool(r["found"]) for r in rows if r["id"] in absent)
        found_present = sum(bool(r["found"]) for r in rows if r["id"] not in absent)
        print(f"{s['system']:<11} \"found\" on {found_absent}/{len(absent)} absent, "
              f"{found_present}/{len(rows) - len(absent)} present")
    print()
    by_question: dict[str, dict[str, dict]] = {}
    for r in run.results:
        by_question.setdefault(r["id"], {})[r["system"]] = r
    systems = [s["system"] for s in run.systems]
    print("  ".join(f"{name:<10}" for name in systems) + "  question")
    for q in questions:
        cells = []
        for name in systems:
            r = by_question[q.id][name]
            if not q.evidence:  # not in the filing: "not found" is the right answer
                mark = "found" if r["found"] else "not found"
            else:
                mark = "correct" if r["correct"] else ("not found" if not r["found"] else "wrong")
            cells.append(f"{mark:<10}")
        print("  ".join(cells) + f"  {q.question[:90]}")


if __name__ == "__main__":
    sys.exit(main())
