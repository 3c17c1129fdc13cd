"""Run `hti-git eval` offline on a real annual report: Apple's 10-K for fiscal 2024 and 20 questions.

A long filing is the other kind of document users bring (Parts, Items, subheadings and many tables).
Compiles `bench/data/apple-10-k-2024.md` with `fast` into a fresh index repository and evaluates the
index against the chunks baseline with no model: accuracy (the deterministic match), evidence recall,
text read per question, and "found" on the 4 questions the filing does not answer. Prints each
question's outcome for both systems, so a change to `fast` shows where it wins and loses.

    python bench/eval_filing.py

The questions are an analyst's, written in everyday words (bench/data/README.md says how they were
made); 16 have an answer in the filing (8 from tables, 8 from its text), 4 do not.
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
FILING = DATA / "apple-10-k-2024.md"
QUESTIONS = DATA / "apple-10-k-2024.qa.jsonl"


def main() -> int:
    bench_identity()
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTI_MODEL"):
        os.environ.pop(name, None)  # offline by design
    questions = load_questions(QUESTIONS)
    with tempfile.TemporaryDirectory() as tmp:
        init_index(Path(tmp) / "idx")
        with IndexRepo(Path(tmp) / "idx") as repo:
            result = compile_path(repo, FILING, Settings(), method="fast")
            run = run_eval(repo, Settings(), questions, EvalOptions(baselines=("chunks",), use_cache=False),
                           source=QUESTIONS.name)
    print(f"{FILING.name}: {len(FILING.read_text(encoding='utf-8')):,} characters, "
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
