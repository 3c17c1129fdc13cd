"""verify: clean on fresh compiles, and each planted fault is caught with one line naming page and place."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from review_support import CONTRACTS, commit_files, contract, edit_page

from hti_git.cli import main
from hti_git.compile.pipeline import compile_path
from hti_git.config import Settings
from hti_git.index.catalog import shard_path
from hti_git.review.verify import verify_snapshot
from tests.support.shared import require_shared

DOC = "services"
FEES = f"{DOC}/clauses/2-fees.md"


def _text_value(page):
    fld = next(f for f in page.meta["fields"] if f["name"] == "text")
    return fld["values"][0]


def _checks(repo):
    return [(p.page, p.check) for p in verify_snapshot(repo.snapshot("HEAD")).problems]


def test_fresh_compile_verifies_clean(repo, compile_text):
    compile_text(contract())
    report = verify_snapshot(repo.snapshot("HEAD"))
    assert report.ok, [p.line() for p in report.problems]
    assert report.docs == [DOC] and report.pages > 5 and report.spans > 5 and report.links > 10
    out = CliRunner().invoke(main, ["-C", str(repo.root), "verify"], catch_exceptions=False)
    assert out.exit_code == 0 and out.output.startswith("OK: 1 document(s)")


def test_span_out_of_range(repo, compile_text):
    compile_text(contract())
    size = len(repo.snapshot("HEAD").read_text(f"{DOC}/source.txt"))
    edit_page(repo, FEES, lambda p: _text_value(p).update(spans=[[size - 5, size + 40]]))
    assert _checks(repo) == [(FEES, "span")]


def test_quote_moved(repo, compile_text):
    compile_text(contract())

    def shift(page):
        value = _text_value(page)
        value["spans"] = [[s + 60, e + 60] for s, e in value["spans"]]

    edit_page(repo, FEES, shift)
    report = verify_snapshot(repo.snapshot("HEAD"))
    [problem] = report.problems
    assert (problem.page, problem.check) == (FEES, "quote")
    assert problem.where == "field 'text' value 1"
    assert problem.line().startswith(f"{FEES}: quote: text 'The Company shall pay")


def test_tampered_source(repo, compile_text):
    compile_text(contract())
    source = repo.snapshot("HEAD").read_text(f"{DOC}/source.txt")
    commit_files(repo, {f"{DOC}/source.txt": source.replace("$10,000", "$90,000").encode()})
    checks = _checks(repo)
    assert (f"{DOC}/index.md", "source-hash") in checks
    assert (FEES, "quote") in checks  # the fees quote no longer matches either


def test_dangling_link(repo, compile_text):
    compile_text(contract())
    commit_files(repo, {}, "Lose a page", remove=(f"{DOC}/clauses/3-term.md",))
    report = verify_snapshot(repo.snapshot("HEAD"))
    lines = [p.line() for p in report.problems]
    assert lines == [f"{DOC}/clauses/index.md: link: link '3-term.md' does not resolve [children[3]]",
                     f"{DOC}/clauses/index.md: link: link '3-term.md' does not resolve [body]",
                     # the catalogue still counts the lost page
                     f"{shard_path(DOC)}: catalog: entry for {DOC} does not match its root page [pages]"]


def test_tampered_schema_and_broken_budget(repo, compile_text):
    compile_text(contract())
    snap = repo.snapshot("HEAD")
    schema = snap.read_text(f"{DOC}/schema.yaml").replace("- name: heading", "- name: title", 1)
    commit_files(repo, {f"{DOC}/schema.yaml": schema.encode()})

    def bloat(page):
        page.body += "word " * 4000

    edit_page(repo, FEES, bloat)
    checks = _checks(repo)
    assert (f"{DOC}/index.md", "schema-hash") in checks
    assert (FEES, "budget") in checks


def test_unverified_values_are_skipped_but_counted(repo, compile_text):
    compile_text(contract())

    def flag(page):
        value = _text_value(page)
        value["unverified"] = True
        value["spans"] = [[0, 5]]  # would fail the quote check if it were checked

    edit_page(repo, FEES, flag)
    report = verify_snapshot(repo.snapshot("HEAD"))
    assert report.ok and report.unverified_skipped == 1


def test_cli_exits_1_with_one_line_per_problem_and_json(repo, compile_text):
    compile_text(contract())
    size = len(repo.snapshot("HEAD").read_text(f"{DOC}/source.txt"))
    edit_page(repo, FEES, lambda p: _text_value(p).update(spans=[[size + 1, size + 9]]))
    runner = CliRunner()
    out = runner.invoke(main, ["-C", str(repo.root), "verify"], catch_exceptions=False)
    assert out.exit_code == 1
    assert out.stdout.splitlines() == [
        f"{FEES}: span: span [{size + 1},{size + 9}] is outside source.txt (0-{size}) [field 'text' value 1]"]
    out = runner.invoke(main, ["-C", str(repo.root), "verify", "--json", "--rev", "HEAD~1"], catch_exceptions=False)
    assert out.exit_code == 0 and json.loads(out.output)["ok"] is True
    out = runner.invoke(main, ["-C", str(repo.root), "verify", "--doc", "nope"])
    assert out.exit_code == 2 and "no document 'nope'" in out.output


@pytest.mark.parametrize("name", ["alcostoresinc-12-14-2005-ex-10-26-agency-agreement",
                                  "meritlifeinsuranceco-06-19-2020-ex-10-xiv-master-services-ag"])
def test_verify_passes_on_fresh_compiles_of_shared_contracts(repo, name):
    path = require_shared(CONTRACTS) / f"{name}.txt"
    compile_path(repo, path, Settings(), method="fast")
    report = verify_snapshot(repo.snapshot("HEAD"))
    assert report.ok, [p.line() for p in report.problems]
    assert report.pages > 10 and report.spans > 10
