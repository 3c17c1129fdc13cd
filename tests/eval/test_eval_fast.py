"""`hti-git eval` offline: the fast index against both baselines on a real contract, through the CLI."""

from __future__ import annotations

import json
import struct
import zlib

from click.testing import CliRunner
from eval_support import DOC

from hti_git.cli import main
from hti_git.config import Settings
from hti_git.eval.harness import EvalOptions, run_eval
from hti_git.eval.questions import load_questions
from hti_git.eval.report import render_report


def _eval(repo, *args):
    return CliRunner().invoke(main, ["-C", str(repo.root), "eval", *args], catch_exceptions=False)


def png_info(path) -> dict:
    """Width, height, bit depth and colour type from a PNG's IHDR, after checking the signature and CRC."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    body = data[16:29]
    assert struct.unpack(">I", data[29:33])[0] == zlib.crc32(kind + body)
    width, height, depth, colour = struct.unpack(">IIBB", body[:10])
    assert data.rstrip(b"\x00")[-8:-4] == b"IEND"
    return {"width": width, "height": height, "depth": depth, "colour": colour, "bytes": len(data)}


def test_offline_run_scores_every_system_honestly(repo, questions_file):
    qs = load_questions(questions_file)
    run = run_eval(repo, Settings(), qs, EvalOptions(baselines=("full-document", "chunks")))
    assert run.mode == "offline" and run.judge["status"] == "unavailable"
    systems = {s["system"]: s for s in run.systems}
    assert list(systems) == ["index@HEAD", "full-document", "chunks"]
    assert len(run.results) == 3 * len(qs)

    index, full, chunks = systems["index@HEAD"], systems["full-document"], systems["chunks"]
    # The full document cannot answer without a model: n/a, but its would-be cost is reported.
    assert full["accuracy"] is None and full["evidence_recall"] is None and not full["answered"]
    source = (repo.root / DOC / "source.txt").read_text()
    assert full["tokens_per_question"] > len(source) / 8
    for s in (index, chunks):
        assert s["answered"] and 0 <= s["accuracy"] <= 1 and s["calls"] == 0
        assert s["tokens_basis"] == "estimated" and 0 < s["tokens_per_question"] < full["tokens_per_question"]
        assert s["build_tokens"] == 0 and s["total_tokens"] == s["inference_tokens"]
        assert s["evidence_recall"] is not None and s["evidence_questions"] == 6  # gold located for 6 of 8

    for row in run.results:
        if row["system"] == "full-document":
            assert row["correct"] is None and row["rule"] == "cannot answer without a model"
        elif row["question_kind"] == "yes-no":
            # the documented extractive rule: Yes when found with evidence, No when not found
            assert row["found"] == bool(row["citations"])
            assert row["correct"] == (row["found"] == (row["reference"] == "Yes"))
        if row["correct"] is False and row["answered"] and not row["rule"].startswith(("yes-no", "not found")):
            assert row["rule"].endswith("(judge unavailable)")
        for c in row["citations"]:
            assert 0 <= c["start"] < c["end"] <= len(source)

    law = next(r for r in run.results if r["system"] == "index@HEAD" and r["category"] == "Governing Law")
    assert law["correct"] and law["rule"] == "containment" and law["evidence"]["recall"] > 0

    report = render_report(run)
    assert "Judge: unavailable" in report and "lower bound" in report and "cannot answer without a model" in report
    assert "| full-document | n/a | n/a |" in report and "## Misses" in report


def test_cli_writes_report_results_and_a_real_png(repo, questions_file, tmp_path):
    out = tmp_path / "out"
    result = _eval(repo, str(questions_file), "--baseline", "full-document", "--baseline", "chunks",
                   "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "index@HEAD" in result.output and "full-document" in result.output and "n/a" in result.output
    assert "Judge unavailable" in result.output and "estimates" in result.output

    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 24 and {r["system"] for r in rows} == {"index@HEAD", "full-document", "chunks"}
    assert {"question", "reference", "answer", "correct", "rule", "evidence", "usage", "tokens"} <= set(rows[0])

    report = (out / "report.md").read_text()
    assert report.startswith("# hti-git eval: qa.jsonl") and "![accuracy vs tokens per question](plot.png)" in report

    info = png_info(out / "plot.png")
    assert (info["width"], info["height"]) == (840, 540)  # 7 x 4.5 inches at 120 dpi
    assert info["depth"] == 8 and info["colour"] in (2, 6) and 10_000 < info["bytes"] < 500_000

    data = json.loads(_eval(repo, str(questions_file), "--baseline", "chunks", "--out", str(out), "--json").output)
    axes = data["files"]["plot_axes"]
    assert axes == {"xlabel": "tokens per question (estimated: text read, no model)", "ylabel": "accuracy (%)",
                    "xscale": "log"}
    assert [s["system"] for s in data["systems"]] == ["index@HEAD", "chunks"]


def test_answers_are_cached_so_a_rerun_resumes(repo, questions_file):
    qs = load_questions(questions_file)
    first = run_eval(repo, Settings(), qs, EvalOptions(baselines=("chunks",)))
    assert not any(r["cached"] for r in first.results)
    assert (repo.git_dir / "hti" / "eval" / "answers.sqlite").exists()
    second = run_eval(repo, Settings(), qs, EvalOptions(baselines=("chunks",)))
    assert all(r["cached"] for r in second.results)
    strip = lambda rows: [{k: v for k, v in r.items() if k != "cached"} for r in rows]  # noqa: E731
    assert strip(second.results) == strip(first.results)
    fresh = run_eval(repo, Settings(), qs, EvalOptions(baselines=("chunks",), use_cache=False))
    assert not any(r["cached"] for r in fresh.results)


def test_bad_input_is_one_line_error(repo, tmp_path, questions_file):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "Q?"}\n')
    result = _eval(repo, str(bad))
    assert result.exit_code == 2 and "bad.jsonl:1: 'answer'" in result.output and "Traceback" not in result.output
    other = tmp_path / "other.jsonl"
    other.write_text('{"question": "Q?", "answer": "No", "doc": "no-such-doc"}\n')
    result = _eval(repo, str(other))
    assert result.exit_code == 2 and "no-such-doc" in result.output
    result = _eval(repo, str(questions_file), "--rev", "no-such-rev")
    assert result.exit_code != 0 and "unknown revision 'no-such-rev'" in result.output


def test_baselines_only_runs_no_index(repo, questions_file, tmp_path):
    """The baselines alone (a team may have another model or endpoint serve them)."""
    out = tmp_path / "base"
    result = _eval(repo, str(questions_file), "--baseline", "chunks", "--baselines-only", "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [s["system"] for s in data["systems"]] == ["chunks"]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert rows and {r["kind"] for r in rows} == {"chunks"}
    assert "chunks" in (out / "report.md").read_text()
    bad = _eval(repo, str(questions_file), "--baselines-only", "--out", str(out))
    assert bad.exit_code == 2 and "--baselines-only needs at least one --baseline" in bad.output


def test_answering_in_four_worker_processes_gives_the_same_rows_as_one(repo, questions_file):
    qs = load_questions(questions_file)
    rows = {}
    for jobs in (1, 4, 4):
        run = run_eval(repo, Settings(), qs, EvalOptions(baselines=("chunks",), use_cache=False, jobs=jobs))
        rows.setdefault(jobs, []).append([{k: r[k] for k in ("system", "question", "answer", "found", "correct",
                                                            "citations", "tokens")} for r in run.results])
    assert rows[1][0] == rows[4][0] == rows[4][1]
    assert [r["system"] for r in rows[4][0]].count("chunks") == len(qs) >= 8


def test_a_resumed_parallel_run_answers_only_what_is_not_cached(repo, questions_file):
    qs = load_questions(questions_file)
    first = run_eval(repo, Settings(), qs[:3], EvalOptions(jobs=2))
    again = run_eval(repo, Settings(), qs, EvalOptions(jobs=2))
    assert [r["cached"] for r in again.results] == [True] * 3 + [False] * (len(qs) - 3)
    assert [r["answer"] for r in again.results[:3]] == [r["answer"] for r in first.results]
