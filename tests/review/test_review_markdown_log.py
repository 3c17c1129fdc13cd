"""The PR-comment Markdown (parsed with markdown-it-py, tables intact, capped) and the compile log."""

from __future__ import annotations

import copy
import json

from click.testing import CliRunner
from markdown_it import MarkdownIt
from review_support import CLAUSES, contract

from hti_git.cli import main
from hti_git.config import Settings
from hti_git.review.diff import diff_revisions
from hti_git.review.log import compile_log
from hti_git.review.render import GITHUB_COMMENT_MAX, MARKER, render_markdown


def _amended(repo, compile_text):
    before = compile_text(contract())
    clauses = dict(CLAUSES)
    clauses[6] = ("Governing Law", CLAUSES[6][1].replace("New York", "Delaware | Texas"))
    clauses[7] = ("Notices", "All notices must be in writing <b>and</b> delivered by courier.")
    after = compile_text(contract(clauses))
    return before, after


def _parser() -> MarkdownIt:
    """GitHub-like: CommonMark (raw HTML on, for <details>) plus tables and ~~strikethrough~~."""
    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _tables(md: str) -> list[list[list[str]]]:
    """Each table as rows of cell texts, from markdown-it-py's token stream."""
    tables, rows, row, cell = [], None, None, None
    for tok in _parser().parse(md):
        if tok.type == "table_open":
            rows = []
        elif tok.type == "tr_open":
            row = []
        elif tok.type in ("th_open", "td_open"):
            cell = ""
        elif tok.type == "inline" and cell is not None:
            cell = tok.content
        elif tok.type in ("th_close", "td_close"):
            row.append(cell)
            cell = None
        elif tok.type == "tr_close":
            rows.append(row)
        elif tok.type == "table_close":
            tables.append(rows)
    return tables


def test_markdown_parses_with_intact_tables_and_details(repo, compile_text):
    before, after = _amended(repo, compile_text)
    out = CliRunner().invoke(main, ["-C", str(repo.root), "diff", before, after, "--format", "md"],
                             catch_exceptions=False)
    assert out.exit_code == 0
    md = out.output
    assert md.startswith(MARKER + "\n")
    summary, provenance = _tables(md)[:2]
    assert summary[0][:4] == ["Document", "Status", "Change", "Subjects"]
    assert all(len(r) == len(summary[0]) == 10 for r in summary)  # a '|' in the text did not split a cell
    assert summary[1][:3] == ["`services`", "recompiled", "source changed"]
    assert provenance[0] == ["Key", "A", "B"] and any("source.sha256" in r[0] for r in provenance)
    html = _parser().render(md)
    assert "<details>" in html and "<summary><b>services</b>" in html
    assert "<b>and</b>" not in html  # document text is escaped, never raw HTML
    assert "<s>New York</s>" in html and "<strong>Delaware | Texas</strong>" in html


def test_markdown_caps_a_500_subject_change(repo, compile_text):
    before, after = _amended(repo, compile_text)
    result = diff_revisions(repo, before, after)
    big = copy.deepcopy(result)
    subjects = big["docs"][0]["subjects"]
    added = subjects["added"][0]
    subjects["added"] = [dict(added, title=f"{i} Clause {i}", page=f"services/clauses/{i}.md") for i in range(500)]
    changed = subjects["changed"][0]
    subjects["changed"] = [dict(changed, title=f"{i} Changed", page=f"services/x/{i}.md") for i in range(500)]
    md = render_markdown(big, limit=25)
    assert "- … and 475 more" in md
    assert md.count("\n- **") <= 60 and len(md) < 30_000
    assert _tables(md)[0][0][0] == "Document"
    # However large the diff, the comment stays under GitHub's size limit.
    subjects["changed"] = [dict(changed, title="x" * 2000 + str(i), page=f"services/y/{i}.md") for i in range(500)]
    assert len(render_markdown(big, limit=500)) <= GITHUB_COMMENT_MAX


def test_markdown_for_identical_revisions_is_a_short_note(repo, compile_text):
    compile_text(contract())
    md = render_markdown(diff_revisions(repo, "HEAD", "HEAD"))
    assert md.startswith(MARKER) and "No index changes" in md and "<details>" not in md


def test_log_lists_compiles_from_trailers_across_branches(repo, compile_text):
    first = compile_text(contract())
    clauses = dict(CLAUSES)
    del clauses[2]
    second = compile_text(contract(clauses))
    branch_tip = compile_text(contract(clauses), settings=Settings(fanout=3), branch="hti/services/narrow")
    compile_text(contract(), name="other")

    rows = compile_log(repo)
    by_sha = {r["sha"]: r for r in rows}
    assert set(by_sha) >= {first, second, branch_tip}
    assert by_sha[first]["doc"] == "services" and by_sha[first]["method"] == "fast"
    assert by_sha[first]["model"] == "none" and by_sha[first]["pages"] > 5
    assert by_sha[first]["tokens_in"] == 0 and by_sha[first]["source_sha256"] != by_sha[second]["source_sha256"]
    assert by_sha[branch_tip]["branches"] == ["hti/services/narrow"]
    assert by_sha[first]["branches"] == ["main", "hti/services/narrow"]  # checked-out branch first
    assert {r["doc"] for r in compile_log(repo, doc="other")} == {"other"}
    assert branch_tip not in {r["sha"] for r in compile_log(repo, rev="main")}

    runner = CliRunner()
    out = runner.invoke(main, ["-C", str(repo.root), "log", "--doc", "services", "--json"], catch_exceptions=False)
    assert out.exit_code == 0
    assert {r["sha"] for r in json.loads(out.output)} == {first, second, branch_tip}
    out = runner.invoke(main, ["-C", str(repo.root), "log"], catch_exceptions=False)
    assert out.exit_code == 0 and first[:10] in out.output and "[main, hti/services/narrow]" in out.output


def test_review_commands_are_documented_with_examples():
    runner = CliRunner()
    for command in ("diff", "log", "verify"):
        out = runner.invoke(main, [command, "--help"], catch_exceptions=False)
        assert out.exit_code == 0 and "Example:" in out.output, command
