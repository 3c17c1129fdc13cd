"""Comparing two revisions of the index: per-question wins and losses."""

from __future__ import annotations

from click.testing import CliRunner
from eval_support import write_questions

from hti_git.cli import main
from hti_git.compile.pipeline import compile_path
from hti_git.config import Settings
from hti_git.eval.harness import EvalOptions, run_eval
from hti_git.eval.questions import load_questions
from hti_git.eval.report import render_report
from hti_git.store import IndexRepo
from hti_git.workspace import init_index

LAW = {"doc": "consulting", "question": "Which state's laws govern this agreement?", "answer": "New York"}
FEE = {"doc": "consulting", "question": "What is the monthly base consulting fee?", "answer": "$3,250"}


def test_two_revisions_show_wins_and_losses(tmp_path, contract_text):
    original = contract_text.read_text(encoding="utf-8")
    v1 = tmp_path / "v1.txt"
    v1.write_text(original.replace("New York", "Ontario"), encoding="utf-8")  # the law question misses
    v2 = tmp_path / "v2.txt"
    v2.write_text(original.replace("3,250", "4,000"), encoding="utf-8")  # the fee question misses
    init_index(tmp_path / "idx")
    with IndexRepo(tmp_path / "idx") as repo:
        compile_path(repo, v1, Settings(), doc="consulting")
        compile_path(repo, v2, Settings(), doc="consulting", replace=True)  # v2 replaces v1
        qs = load_questions(write_questions(tmp_path / "qa.jsonl", [LAW, FEE]))
        run = run_eval(repo, Settings(), qs, EvalOptions(revs=("HEAD~1", "HEAD")))

        assert [s["system"] for s in run.systems] == ["index@HEAD~1", "index@HEAD"]
        assert [r["commit"] for r in run.revisions] == [repo.resolve("HEAD~1").hexsha, repo.resolve("HEAD").hexsha]
        (cmp,) = run.comparisons
        assert (cmp["base"], cmp["other"]) == ("index@HEAD~1", "index@HEAD")
        assert [w["question"] for w in cmp["wins"]] == [LAW["question"]]
        assert [x["question"] for x in cmp["losses"]] == [FEE["question"]]
        assert cmp["unchanged"] == 0
        assert "New York" in cmp["wins"][0]["after"] and "Ontario" in cmp["wins"][0]["before"]
        report = render_report(run)
        assert "## index@HEAD~1 → index@HEAD: 1 won, 1 lost, 0 unchanged" in report
        assert "- won: `consulting` Which state's laws govern this agreement?" in report

        result = CliRunner().invoke(main, ["-C", str(repo.root), "eval", str(tmp_path / "qa.jsonl"), "--rev",
                                           "HEAD~1", "--rev", "HEAD", "--out", str(tmp_path / "out")],
                                    catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert "index@HEAD~1 -> index@HEAD: 1 won, 1 lost, 0 unchanged" in result.output
