"""Run `hti-git eval` offline on the six shared CUAD contracts and their 227 questions.

Compiles the contracts with `fast` into a fresh index repository, evaluates the index against both
baselines (full-document and chunks) with no model, and prints the report table: accuracy, evidence
recall and tokens per question. Offline, accuracy is the deterministic match only (no judge), the
full-document baseline cannot answer (accuracy n/a; its tokens are what its prompt would cost) and
tokens marked ~ are estimates of the text each system read.

Then issue 16's figures per answering system: the yes/no evidence hit (yes/no questions with located
gold evidence whose citations overlap it; "not found" is a miss), "found" on questions whose clause is
absent (no gold evidence) and on those whose clause is present (recall), for all six contracts and
for the three `fast`'s calibration was tuned on and the three held out.

    python bench/eval_cuad.py [--pdf] [OUT_DIR]     # HTI_SHARED=/path/to/shared to point elsewhere

`--pdf` compiles the contracts' PDFs instead of their text (what users mostly bring; the page breaks
and line layout differ from the text files').
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from benchlib import CUAD, bench_identity, require_cuad

from hti_git.compile.pipeline import compile_path
from hti_git.config import Settings
from hti_git.eval.harness import EvalOptions, run_eval
from hti_git.eval.questions import load_questions
from hti_git.eval.report import render_table, write_outputs
from hti_git.store import IndexRepo
from hti_git.workspace import init_index

TUNED = ("alcostores", "europeanmicro", "microgenics")  # the contracts fast's constants were tuned on


def issue16_figures(rows: list[dict], absent_ids: set[str]) -> str:
    """Yes/no evidence hit, found on absent clauses, present-clause recall and tokens per question."""
    yes_no = [r for r in rows if r["question_kind"] == "yes-no" and r["evidence"] and r["evidence"]["gold"]]
    hit = sum(r["evidence"]["covered"] > 0 for r in yes_no)
    absent = [r for r in rows if r["id"] in absent_ids]
    present = [r for r in rows if r["id"] not in absent_ids]
    correct = sum(r["correct"] is True for r in rows)
    return (f"accuracy {correct / len(rows):.1%}, yes/no evidence hit {hit}/{len(yes_no)} = "
            f"{hit / max(len(yes_no), 1):.2f}, found on absent {sum(r['found'] for r in absent)}/{len(absent)} = "
            f"{sum(r['found'] for r in absent) / max(len(absent), 1):.1%}, present recall "
            f"{sum(r['found'] for r in present)}/{len(present)} = {sum(r['found'] for r in present) / max(len(present), 1):.1%}"
            f", ~{sum(r['tokens'] for r in rows) / len(rows):,.0f} tokens/q")


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--pdf"]
    suffix = "pdf" if "--pdf" in sys.argv[1:] else "txt"
    require_cuad()
    bench_identity()
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTI_MODEL"):
        os.environ.pop(name, None)  # offline by design: the numbers must not depend on an endpoint
    questions = load_questions(CUAD / "qa.jsonl")
    with tempfile.TemporaryDirectory() as tmp:
        init_index(Path(tmp) / "idx")
        with IndexRepo(Path(tmp) / "idx") as repo:
            contracts = sorted((CUAD / "contracts").glob(f"*.{suffix}"))
            for path in contracts:
                compile_path(repo, path, Settings(), method="fast")
            started = time.perf_counter()
            run = run_eval(repo, Settings(), questions, EvalOptions(baselines=("full-document", "chunks"),
                                                                    use_cache=False), source="qa.jsonl")
            seconds = time.perf_counter() - started
        out = Path(args[0]) if args else Path(tmp) / "out"
        written = write_outputs(run, out)
        yes_no = sum(q.yes_no for q in questions)
        print(f"{len(questions)} questions ({yes_no} yes/no, {len(questions) - yes_no} value) on "
              f"{len(contracts)} contracts ({suffix}); offline (fast index, no model, no judge); {seconds:.1f} s\n")
        print(render_table(run), end="")
        print()
        for s in run.systems:
            if s["answered"]:
                print(f"{s['system']}: yes/no {s['accuracy_yes_no']:.1%}, value {s['accuracy_value']:.1%}, "
                      f"found {s['found']}/{s['questions']}, undecided without a judge {s['unmatched']}")
            else:
                print(f"{s['system']}: not answered offline; ~{s['tokens_per_question']:,.0f} prompt tokens per "
                      f"question (no model to answer)")
        absent_ids = {q.id for q in questions if not q.evidence}
        print("\nissue 16 figures (tuned on: " + ", ".join(TUNED) + ")")
        for s in run.systems:
            if not s["answered"]:
                continue
            rows = [r for r in run.results if r["system"] == s["system"]]
            tuned = [r for r in rows if r["doc"].startswith(TUNED)]
            held = [r for r in rows if not r["doc"].startswith(TUNED)]
            for label, subset in (("all 6", rows), ("tuned 3", tuned), ("held-out 3", held)):
                print(f"{s['system']:<11} {label:<11} {issue16_figures(subset, absent_ids)}")
        if args:
            print(f"\nwrote {written['report']}, {written['results']}, {written['plot']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
