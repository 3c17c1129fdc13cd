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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hti_git.compile.pipeline import compile_path  # noqa: E402
from hti_git.config import Settings  # noqa: E402
from hti_git.eval.harness import EvalOptions, run_eval  # noqa: E402
from hti_git.eval.questions import load_questions  # noqa: E402
from hti_git.eval.report import render_table, write_outputs  # noqa: E402
from hti_git.store import IndexRepo  # noqa: E402
from hti_git.workspace import init_index  # noqa: E402

SHARED = Path(os.environ.get("HTI_SHARED", ROOT.parent / "shared"))
CUAD = SHARED / "data" / "cuad"


def main() -> int:
    if not CUAD.exists():
        print(f"shared CUAD data not found at {CUAD}; set HTI_SHARED", file=sys.stderr)
        return 2
    for name, value in {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
                        "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}.items():
        os.environ.setdefault(name, value)
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
