"""Renderings of an EvalRun: the summary table (text and Markdown), report.md, results.jsonl, plot.png."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hti_git.eval.harness import EvalRun
from hti_git.eval.plot import PlotUnavailable, write_plot

COLUMNS = ("system", "accuracy", "evidence recall", "calls / q", "tokens / q", "build tokens", "total tokens")
CELL_CHARS = 140


def table_rows(run: EvalRun) -> list[list[str]]:
    """One row of strings per system, in COLUMNS order. Estimated tokens carry a '~'."""
    rows = []
    for s in run.systems:
        est = "~" if s["tokens_basis"] == "estimated" else ""
        acc = "n/a" if s["accuracy"] is None else f"{s['accuracy']:.1%} ({s['correct']}/{s['questions']})"
        rec = "n/a" if s["evidence_recall"] is None else f"{s['evidence_recall']:.1%} (n={s['evidence_questions']})"
        rows.append([
            s["system"], acc, rec, f"{s['calls'] / max(s['questions'], 1):.1f}",
            f"{est}{s['tokens_per_question']:,.0f}", f"{s['build_tokens']:,}", f"{est}{s['total_tokens']:,}",
        ])
    return rows


def render_table(run: EvalRun) -> str:
    """The summary as an aligned plain-text table."""
    rows = [list(COLUMNS)] + table_rows(run)
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = []
    for n, r in enumerate(rows):
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def render_markdown_table(run: EvalRun) -> str:
    head = "| " + " | ".join(COLUMNS) + " |\n|" + "---|" + "---:|" * (len(COLUMNS) - 1) + "\n"
    return head + "".join("| " + " | ".join(r) + " |\n" for r in table_rows(run))


def _cell(text: Any, limit: int = CELL_CHARS) -> str:
    text = " ".join(str(text or "").split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _mode_lines(run: EvalRun) -> list[str]:
    systems = {s["kind"] for s in run.systems}
    if run.mode == "offline":
        lines = ["- **Answering: offline, no model.** The index answered with `fast` (BM25 navigation, "
                 "extractive answers)."]
        if "chunks" in systems:
            lines.append("- `chunks` answered extractively: its top BM25 passages of source.txt are the answer, "
                         "under the same found threshold as `fast`.")
        if "full-document" in systems:
            lines.append("- `full-document` cannot answer without a model: its accuracy is **n/a**; its tokens "
                         "are what its prompt (whole source.txt + question) would cost per question.")
        lines.append("- Tokens marked `~` are **estimates** of the text each system read (pages opened, or the "
                     "prompt it would send), not model usage; no model tokens were spent.")
    else:
        lines = [f"- **Answering: model `{run.model}`** for the index (llm navigation) and every baseline; "
                 "tokens are measured from the server's usage (answers were not served from a response cache)."]
    return lines


def _judge_lines(run: EvalRun) -> list[str]:
    j = run.judge
    if j["status"] == "used":
        return [f"- **Judge: `{j['model']}`** ruled on answers the deterministic match could not decide "
                f"({j['calls']} new calls, {j['input_tokens']:,} input / {j['output_tokens']:,} output tokens; "
                "judge tokens are not counted in any system's cost)."]
    return [f"- **Judge: {j['status']}** ({j['note']}). Answers the deterministic match could not decide "
            "count as misses, labelled `judge unavailable` below: accuracy here is a **lower bound** of what "
            "a judge would grant, and exact for yes/no questions."]


def render_report(run: EvalRun) -> str:
    """report.md: setup, the summary table, how it was measured, revision wins/losses, then the misses."""
    yes_no = sum(1 for r in run.results if r["system"] == run.systems[0]["system"] and r["question_kind"] == "yes-no")
    docs = sorted({r["doc"] for r in run.results if r["doc"]})
    revs = ", ".join(f"`{r['rev']}` ({(r['commit'] or '')[:10]})" for r in run.revisions)
    out = [f"# hti-git eval: {run.source or 'questions'}", "",
           f"{run.questions} questions ({yes_no} yes/no, {run.questions - yes_no} value) on {len(docs)} document(s); "
           f"index at {revs}.", ""]
    out += _mode_lines(run) + _judge_lines(run) + [""]
    out += ["## Results", "", render_markdown_table(run)]
    for s in run.systems:
        parts = []
        if s["accuracy_yes_no"] is not None:
            parts.append(f"yes/no {s['accuracy_yes_no']:.1%}")
        if s["accuracy_value"] is not None:
            parts.append(f"value {s['accuracy_value']:.1%}")
        parts.append(f"found {s['found']}/{s['questions']}")
        if s["fallback"]:
            parts.append(f"fallback {s['fallback']}")
        if s["judged"]:
            parts.append(f"judged {s['judged']}")
        if s["unmatched"]:
            parts.append(f"undecided without a judge {s['unmatched']}")
        if s["truncated"]:
            parts.append(f"truncated to the context on {s['truncated']}")
        out.append(f"- `{s['system']}`: " + ", ".join(parts))
    out += ["", "## How this was measured", "",
            "- **Accuracy**: a deterministic normalised match first (yes/no; dates in several formats; numbers "
            "in digits or words with their units; the reference contained in the answer; each party name), "
            "then the judge for what it cannot decide. Yes/no rule for systems without a model: *Yes* when "
            "they found a passage with evidence, *No* when they found nothing. An extractive answer matches "
            "a value when its passages contain the reference.",
            "- **Evidence recall**: of the gold evidence passages found in source.txt, the share that an "
            "answer's citations overlap; averaged over questions with gold evidence (n).",
            "- **Tokens / q**: input + output tokens per question; **build tokens** from the index's "
            "provenance (the compile's model usage; 0 for `fast`); **total** = build + all questions.", ""]
    for c in run.comparisons:
        out += [f"## {c['base']} → {c['other']}: {len(c['wins'])} won, {len(c['losses'])} lost, "
                f"{c['unchanged']} unchanged", ""]
        for word, items in (("won", c["wins"]), ("lost", c["losses"])):
            for e in items:
                out.append(f"- {word}: `{e['doc'] or '-'}` {_cell(e['question'], 100)} — reference "
                           f"*{_cell(e['reference'], 60)}*; before: {_cell(e['before'], 80)}; after: {_cell(e['after'], 80)}")
        out.append("")
    out += ["## Misses", ""]
    for s in run.systems:
        if not s["answered"]:
            out += [f"### {s['system']}", "", "Not answered (no model): no misses to list.", ""]
            continue
        misses = [r for r in run.results if r["system"] == s["system"] and r["correct"] is not True]
        out += [f"### {s['system']} ({len(misses)} of {s['questions']})", ""]
        if not misses:
            out += ["None.", ""]
            continue
        out += ["| line | doc | question | reference | answer | rule |", "|---:|---|---|---|---|---|"]
        for r in misses:
            answer = r["answer"] if r["found"] else "not found"
            out.append(f"| {r['line']} | {_cell(r['doc'] or '-', 40)} | {_cell(r['question'], 90)} | "
                       f"{_cell(r['reference'], 60)} | {_cell(answer, 90)} | {_cell(r['rule'], 60)} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def write_outputs(run: EvalRun, out_dir: Path) -> dict[str, Any]:
    """Write report.md, results.jsonl and plot.png (when matplotlib is installed) under `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Any] = {"report": str(out_dir / "report.md"), "results": str(out_dir / "results.jsonl")}
    try:
        spec = write_plot(run.systems, out_dir / "plot.png")
        written["plot"] = str(out_dir / "plot.png")
        written["plot_axes"] = spec["axes"]
    except PlotUnavailable as exc:
        written["plot"] = None
        written["plot_note"] = str(exc)
    report = render_report(run)
    if written["plot"]:
        report = report.replace("## How this was measured", "![accuracy vs tokens per question](plot.png)\n\n"
                                "## How this was measured", 1)
    (out_dir / "report.md").write_text(report, encoding="utf-8")
    with (out_dir / "results.jsonl").open("w", encoding="utf-8") as fh:
        for row in run.results:
            fh.write(json.dumps(row, ensure_ascii=False, sort_keys=False) + "\n")
    return written
