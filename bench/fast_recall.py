"""Where `fast`'s yes/no evidence hit is lost on the shared CUAD contracts: ranking or "not found".

Compiles the six contracts with `fast` and, for each yes/no question with located gold evidence, finds
the rank of the first passage (as read and cited) overlapping the gold. Prints, for all six, the tuned
three and the held-out three: the evidence hit, how often the gold is among the passages read
(`offline.READ`) and among the best 10 and 20, and the questions whose gold was read but which were
answered "not found", and how often the answer's first citation is the gold (what a reader sees first).
The gold-read count is the evidence hit's ceiling with a perfect "not found";
reading more passages helps only as far as the top-10 and top-20 counts exceed it.

    python bench/fast_recall.py            # HTI_SHARED=/path/to/shared to point elsewhere
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from benchlib import CUAD, bench_identity, require_cuad

from hti_git.compile.pipeline import compile_path
from hti_git.config import Settings
from hti_git.eval.evidence import EvidenceLocator, overlaps
from hti_git.query import offline as nav
from hti_git.query.clause_search import clause_index, question_focus, question_stems
from hti_git.store import IndexRepo
from hti_git.workspace import init_index

TUNED = ("alcostores", "europeanmicro", "microgenics")  # as in eval_cuad.py


def main() -> int:
    require_cuad()
    bench_identity()
    questions = [json.loads(line) for line in (CUAD / "qa.jsonl").read_text().splitlines() if line.strip()]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        init_index(Path(tmp) / "idx")
        with IndexRepo(Path(tmp) / "idx") as repo:
            for path in sorted((CUAD / "contracts").glob("*.txt")):
                compile_path(repo, path, Settings(), method="fast")
            snap = repo.snapshot()
            for q in questions:
                if q["kind"] != "yes-no" or not q["evidence"]:
                    continue
                index = clause_index(snap, q["doc"])
                locator = EvidenceLocator(index.text)
                gold = [span for text in q["evidence"] for span in locator.find(text)]
                if not gold:
                    continue
                answer = nav.ask_fast(snap, q["question"], docs=[q["doc"]])
                groups, weights = nav.weighted(index, question_stems(q["question"]), question_focus(q["question"]))
                ranked = nav._ranked(index, groups, weights, True)
                rank = next((i for i, (_, u) in enumerate(ranked) if any(overlaps(nav._span(u), g) for g in gold)),
                            len(ranked))
                hit = any(overlaps((c.start, c.end), g) for c in answer.citations for g in gold)
                first = bool(answer.citations) and any(overlaps((answer.citations[0].start, answer.citations[0].end), g)
                                                       for g in gold)
                rows.append({"tuned": q["doc"].startswith(TUNED), "rank": rank, "hit": hit, "found": answer.found,
                             "first": first})
    for label, keep in (("all 6", lambda r: True), ("tuned 3", lambda r: r["tuned"]),
                        ("held-out 3", lambda r: not r["tuned"])):
        part = [r for r in rows if keep(r)]
        n = len(part)
        within = {k: sum(r["rank"] < k for r in part) for k in (nav.READ, 10, 20)}
        lost = sum(r["rank"] < nav.READ and not r["found"] for r in part)
        print(f"{label:<11} yes/no with gold {n}: evidence hit {sum(r['hit'] for r in part)} (first citation "
              f"{sum(r['first'] for r in part)}), gold among the "
              f"{nav.READ} read {within[nav.READ]} ({within[nav.READ] / n:.2f}), best 10 {within[10]}, best 20 "
              f"{within[20]}; gold read but \"not found\" {lost}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
