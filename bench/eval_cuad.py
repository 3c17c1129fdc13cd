"""Run `hti-git eval` offline on the six shared CUAD contracts and their 227 questions.

Compiles the contracts with `fast` into a fresh index repository, evaluates the index against both
baselines (full-document and chunks) with no model, and prints the report table: accuracy, evidence
recall and tokens per question. Offline, accuracy is the deterministic match only (no judge), the
full-document baseline cannot answer (accuracy n/a; its tokens are what its prompt would cost) and
tokens marked ~ are estimates of the text each system read.

    python bench/eval_cuad.py [OUT_DIR]     # HTI_SHARED=/path/to/shared to point elsewhere
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


def main() -> int:
    require_cuad()
    bench_identity()
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTI_MODEL"):
        os.environ.pop(name, None)  # offline by design: the numbers must not depend on an endpoint
    questions = load_questions(CUAD / "qa.jsonl")
    with tempfile.TemporaryDirectory() as tmp:
        init_index(Path(tmp) / "idx")
        with IndexRepo(Path(tmp) / "idx") as repo:
            contracts = sorted((CUAD / "contracts").glob("*.txt"))
            for path in contracts:
                compile_path(repo, path, Settings(), method="fast")
            started = time.perf_counter()
            run = run_eval(repo, Settings(), questions, EvalOptions(baselines=("full-document", "chunks"),
                                                                    use_cache=False), source="qa.jsonl")
            seconds = time.perf_counter() - started
        out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tmp) / "out"
        written = write_outputs(run, out)
        yes_no = sum(q.yes_no for q in questions)
        print(f"{len(questions)} questions ({yes_no} yes/no, {len(questions) - yes_no} value) on "
              f"{len(contracts)} contracts; offline (fast index, no model, no judge); {seconds:.1f} s\n")
        print(render_table(run), end="")
        print()
        for s in run.systems:
            if s["answered"]:
                print(f"{s['system']}: yes/no {s['accuracy_yes_no']:.1%}, value {s['accuracy_value']:.1%}, "
                      f"found {s['found']}/{s['questions']}, undecided without a judge {s['unmatched']}")
            else:
                print(f"{s['system']}: not answered offline; ~{s['tokens_per_question']:,.0f} prompt tokens per "
                      f"question (no model to answer)")
        if len(sys.argv) > 1:
            print(f"\nwrote {written['report']}, {written['results']}, {written['plot']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
