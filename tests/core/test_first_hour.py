"""Issue 17, "the first hour": what a new user meets first does what it says and loses nothing."""

from __future__ import annotations

import json
import subprocess

import pytest

from hti_git.cli import main
from tests.support.cli import git_out as _git
from tests.support.cli import run


def _state(path):
    return (_git(path, "rev-parse", "HEAD"), (path / ".git" / "index").read_bytes(),
            _git(path, "status", "--porcelain", "--untracked-files=all"), _git(path, "for-each-ref"))


@pytest.fixture
def idx(tmp_path):
    run("init", tmp_path / "idx")
    return tmp_path / "idx"


def _memo(path, body: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# Memo\n\n{body}\n\n# Budget\n\nThe budget is ten thousand euros.\n", encoding="utf-8")
    return path


# 1. No silent overwrite ------------------------------------------------------------------------------


def test_a_different_file_of_the_same_name_is_refused_and_changes_nothing(idx, tmp_path):
    first = _memo(tmp_path / "a" / "contract.txt", "The launch is planned for March.")
    second = _memo(tmp_path / "b" / "contract.txt", "The launch is planned for October.")
    run("-C", idx, "compile", first)
    before = _state(idx)
    result = run("-C", idx, "compile", second, ok=False)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    error = [line for line in lines if line.startswith("hti-git: error:")]
    assert len(error) == 1, result.output
    assert "contract/ already indexes" in error[0] and "a/contract.txt" in error[0]
    assert "--doc b-contract" in error[0] and "--replace" in error[0]
    assert _state(idx) == before
    assert "March" in (idx / "contract" / "source.txt").read_text()


def test_doc_or_replace_resolve_the_clash(idx, tmp_path):
    first = _memo(tmp_path / "a" / "contract.txt", "The launch is planned for March.")
    second = _memo(tmp_path / "b" / "contract.txt", "The launch is planned for October.")
    run("-C", idx, "compile", first)
    run("-C", idx, "compile", "--doc", "b-contract", second)
    assert [r["doc"] for r in json.loads(run("-C", idx, "ls", "--json").output)] == ["b-contract", "contract"]
    run("-C", idx, "compile", "--replace", second)
    assert "October" in (idx / "contract" / "source.txt").read_text()
    # once replaced, the second file is the document's source: an edit of it is a plain recompile
    _memo(second, "The launch is planned for November.")
    assert "committed" in run("-C", idx, "compile", second).output
    # ...and the first one is now the different file
    assert run("-C", idx, "compile", first, ok=False).exit_code == 1


def test_an_edited_source_at_the_same_path_is_still_a_recompile(idx, tmp_path):
    source = _memo(tmp_path / "a" / "contract.txt", "The launch is planned for March.")
    run("-C", idx, "compile", source)
    _memo(source, "The launch is planned for May.")
    out = run("-C", idx, "compile", source).output
    assert "committed  contract:" in out
    assert "May" in (idx / "contract" / "source.txt").read_text()
    assert _git(idx, "log", "-1", "--format=%s").startswith("Recompile contract")


def test_the_same_file_from_another_working_directory_is_the_same_source(idx, tmp_path, monkeypatch):
    source = _memo(tmp_path / "a" / "contract.txt", "The launch is planned for March.")
    run("-C", idx, "compile", source)
    _memo(source, "The launch is planned for June.")
    monkeypatch.chdir(tmp_path / "a")
    assert "committed" in run("-C", idx, "compile", "contract.txt").output


def test_names_in_any_script_stay_distinct(idx, tmp_path):
    docs = {"契約.html": "第一条 本契約の目的は共同研究です。", "合同.html": "第一条 本合同的目的是合作。",
            "договор.txt": "Статья 1. Предмет договора.", "Straße.md": "# Straße\n\nDie Straße ist lang."}
    for name, text in docs.items():
        (tmp_path / name).write_text(f"<p>{text}</p>" if name.endswith(".html") else text, encoding="utf-8")
    run("-C", idx, "compile", *(tmp_path / name for name in docs))
    names = sorted(r["doc"] for r in json.loads(run("-C", idx, "ls", "--json").output))
    assert names == sorted(["契約", "合同", "договор", "straße"])
    assert _git(idx, "status", "--porcelain", "--untracked-files=all") == ""  # working tree synced, names unquoted
    for name in names:
        assert (idx / name / "source.txt").is_file()
    assert run("-C", idx, "verify").output.startswith("OK: 4 document(s)")


def test_ascii_and_accented_names_keep_their_old_slugs():
    from hti_git.index.slug import doc_slug

    assert doc_slug("slingerbaginc-05-27-2020-ex-10-7-consulting-agreement.txt") == \
        "slingerbaginc-05-27-2020-ex-10-7-consulting-agreement"
    assert doc_slug("Café Résumé’s.pdf") == "cafe-resumes"
    assert doc_slug("../../etc/passwd") == "document"
    assert doc_slug("a\u202eb/../c.txt") == "ab-c"
    assert doc_slug("CON.txt") == "con-1"
    assert len(doc_slug("契" * 200 + ".txt").encode("utf-8")) <= 200


# 2. No index where none was asked for ------------------------------------------------------------------


@pytest.fixture
def plain_git(tmp_path):
    """A Git repository with one commit that `hti-git init` never touched."""
    repo = tmp_path / "code"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "main.py").write_text("print('hello')\n")
    _git(repo, "add", "main.py")
    _git(repo, "commit", "-q", "-m", "code")
    return repo


@pytest.mark.parametrize("command", [["compile", "{doc}"], ["ls"], ["show"], ["verify"], ["log"],
                                     ["ask", "Who pays?"], ["diff", "HEAD", "HEAD"], ["cache", "stats"]])
def test_commands_outside_an_index_say_so_and_write_nothing(plain_git, tmp_path, command):
    doc = _memo(tmp_path / "memo.md", "The launch is planned for March.")
    before = _state(plain_git)
    result = run("-C", plain_git, *[a.format(doc=doc) for a in command], ok=False)
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == (
        f"hti-git: error: {plain_git} is a Git repository but not an hti-git index (no hti.yaml); "
        "run 'hti-git init' there to make it one")
    assert "No documents compiled yet" not in result.output
    assert _state(plain_git) == before
    assert not (plain_git / ".git" / "hti").exists()


def test_init_adopts_the_repository_and_then_compile_works(plain_git, tmp_path):
    doc = _memo(tmp_path / "memo.md", "The launch is planned for March.")
    run("-C", plain_git, "init")
    assert "committed  memo:" in run("-C", plain_git, "compile", doc).output
    assert (plain_git / "main.py").read_text() == "print('hello')\n"


def test_a_bare_clone_of_an_index_is_an_index(idx, tmp_path):
    _memo(tmp_path / "memo.md", "The launch is planned for March.")
    run("-C", idx, "compile", tmp_path / "memo.md")
    subprocess.run(["git", "clone", "-q", "--bare", str(idx), str(tmp_path / "bare.git")], check=True)
    assert "March" in run("-C", tmp_path / "bare.git", "ask", "When is the launch?").output


# 6. Small things ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["ls"], ["init"], ["compile", "x.txt"]])
def test_a_missing_directory_is_named_as_such(tmp_path, command):
    missing = tmp_path / "nonexistent"
    result = run("-C", missing, *command, ok=False)
    assert result.exit_code == 2
    assert result.output.strip() == f"hti-git: error: -C {missing}: no such directory"
    assert not missing.exists()


# 3. Model settings that work as the notice says ---------------------------------------------------------


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("env,notice", [
    ({}, "set OPENAI_API_KEY and HTI_MODEL (OpenAI), or OPENAI_BASE_URL and HTI_MODEL (a local "
         "OpenAI-compatible server)"),
    ({"HTI_MODEL": "gpt-5-mini"}, "model 'gpt-5-mini' is set but no endpoint: set OPENAI_API_KEY (OpenAI), "
                                  "or OPENAI_BASE_URL for a local OpenAI-compatible server"),
    ({"OPENAI_API_KEY": "sk-test"}, "OPENAI_API_KEY is set but no model: set HTI_MODEL, `model:` in hti.yaml, "
                                    "or --model"),
])
def test_half_configured_model_runs_fast_and_names_what_is_missing(idx, tmp_path, monkeypatch, env, notice):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    doc = _memo(tmp_path / "memo.md", "The launch is planned for March.")
    result = run("-C", idx, "compile", doc)
    assert result.stderr.splitlines() == [f"Compiling with the offline 'fast' method; for 'standard': {notice}."]
    assert "committed  memo:" in result.stdout and ", fast," in result.stdout
    answer = json.loads(run("-C", idx, "ask", "--json", "When is the launch?").output)
    assert answer["found"] and "March" in answer["answer"] and answer["usage"]["calls"] == 0
    (tmp_path / "qa.jsonl").write_text(json.dumps({"question": "When is the launch?", "answer": "March"}) + "\n")
    out = run("-C", idx, "eval", tmp_path / "qa.jsonl", "--out", tmp_path / "eval-out").output
    assert "Offline (no model)" in out


def test_model_flag_without_endpoint_is_an_error_not_a_silent_fast_compile(idx, tmp_path):
    doc = _memo(tmp_path / "memo.md", "The launch is planned for March.")
    before = _state(idx)
    result = run("-C", idx, "compile", "--model", "gpt-5-mini", doc, ok=False)
    assert result.exit_code == 1 and "OPENAI_API_KEY" in result.output and "committed" not in result.output
    assert _state(idx) == before


def test_check_names_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("HTI_MODEL", "llama3.1")
    result = run("-C", tmp_path, "check", ok=False)
    assert result.exit_code == 1
    assert result.output.strip() == ("hti-git: error: no usable model endpoint: model 'llama3.1' is set but no "
                                     "endpoint: set OPENAI_API_KEY (OpenAI), or OPENAI_BASE_URL for a local "
                                     "OpenAI-compatible server")


@pytest.mark.parametrize("command", [["compile", "--method", "standard", "{doc}"],
                                     ["ask", "--method", "llm", "Which state's law governs?"],
                                     ["compile", "{doc}"], ["ask", "Which state's law governs?"]])
def test_a_refused_connection_fails_within_3_seconds_with_a_hint(idx, tmp_path, monkeypatch, contract_text, command):
    import time

    doc = _memo(tmp_path / "memo.md", "The launch is planned for March.")
    run("-C", idx, "compile", contract_text)
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{_free_port()}/v1")
    monkeypatch.setenv("HTI_MODEL", "llama3.1")
    before = _state(idx)
    started = time.monotonic()
    result = run("-C", idx, *[a.format(doc=doc) for a in command], ok=False)
    assert time.monotonic() - started < 3
    assert result.exit_code == 1
    error = result.stderr.strip().splitlines()
    assert len(error) == 1 and "connection refused" in error[0] and "--method fast" in error[0], result.stderr
    assert _state(idx) == before


# 5. Batches ----------------------------------------------------------------------------------------------


def _screen(raw: str) -> list[str]:
    """What a terminal shows for `raw`: \\r returns to the line start, ESC[K erases to its end."""
    lines, current, col = [], [], 0
    i = 0
    while i < len(raw):
        if raw.startswith("\x1b[K", i):
            del current[col:]
            i += 3
            continue
        ch = raw[i]
        i += 1
        if ch == "\r":
            col = 0
        elif ch == "\n":
            lines.append("".join(current))
            current, col = [], 0
        else:
            if col < len(current):
                current[col] = ch
            else:
                current.append(ch)
            col += 1
    if current:
        lines.append("".join(current))
    return lines


def test_on_a_terminal_the_progress_line_never_runs_into_a_result(idx, tmp_path):
    import os
    import sys

    folder = tmp_path / "docs"
    for i in range(3):
        _memo(folder / f"memo{i}.md", f"Memo {i}: the launch is planned for March.")
    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "hti_git", "-C", str(idx), "compile", "--method", "fast",
                             str(folder)], stdout=slave, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=60) == 0
    raw = b"".join(chunks).decode()
    assert "compiling: 0 of 3 document(s) done" in raw  # the progress line was drawn...
    screen = [line for line in _screen(raw) if line.strip()]
    assert [line.split(":")[0] for line in screen] == ["committed  memo0", "committed  memo1", "committed  memo2"]


def test_each_result_is_reported_when_its_document_finishes(idx, tmp_path, monkeypatch):
    import threading

    import hti_git.compile.batch as batch
    from hti_git.config import Settings
    from hti_git.store import IndexRepo

    slow, fast = _memo(tmp_path / "slow.md", "A long one."), _memo(tmp_path / "quick.md", "A short one.")
    fast_reported = threading.Event()
    real = batch.prepare_compile

    def prepare(repo, path, settings, **kw):
        if path == slow:
            fast_reported.wait(10)  # the slow document finishes only after the quick one was reported
        return real(repo, path, settings, **kw)

    monkeypatch.setattr(batch, "prepare_compile", prepare)
    seen = []

    def on_done(result, failure):
        seen.append(result.doc)
        if result.doc == "quick":
            fast_reported.set()

    with IndexRepo(idx) as repo:
        result = batch.compile_many(repo, [str(slow), str(fast)], Settings(), jobs=2, on_done=on_done)
    assert seen == ["quick", "slow"] and not result.failures


def test_a_failure_is_listed_once(idx, tmp_path):
    folder = tmp_path / "docs"
    _memo(folder / "memo.md", "The launch is planned for March.")
    (folder / "empty.txt").write_text("")
    result = run("-C", idx, "compile", folder, ok=False)
    assert result.exit_code == 1
    assert result.output.count("empty.txt") == 1, result.output
    assert result.stderr.splitlines()[-1] == "1 of 2 document(s) failed (see the 'failed' lines above)"
    assert "committed  memo:" in result.stdout


def test_a_folders_readme_license_and_changelog_are_skipped_unless_all(idx, tmp_path):
    folder = tmp_path / "docs"
    _memo(folder / "contract.md", "The launch is planned for March.")
    for name in ("README.md", "LICENSE", "LICENSE.txt", "CHANGELOG.md", "readme.ja.md"):
        (folder / name).write_text(f"# {name}\n\nSomething about {name}.\n")
    (folder / "license-agreement.txt").write_text("This License Agreement is made by Acme and Beta.\n")
    result = run("-C", idx, "compile", folder)
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped")]
    assert len(skipped) == 4 and all("(--all includes it)" in line for line in skipped)  # LICENSE has no suffix
    docs = sorted(r["doc"] for r in json.loads(run("-C", idx, "ls", "--json").output))
    assert docs == ["contract", "license-agreement"]
    rows = json.loads(run("-C", idx, "compile", "--json", folder).output)
    assert sorted(r["status"] for r in rows) == ["skipped"] * 4 + ["unchanged"] * 2
    run("-C", idx, "compile", "--all", folder)
    docs = sorted(r["doc"] for r in json.loads(run("-C", idx, "ls", "--json").output))
    assert docs == ["changelog", "contract", "license", "license-agreement", "readme", "readme-ja"]


def test_a_readme_named_on_its_own_is_compiled(idx, tmp_path):
    (tmp_path / "README.md").write_text("# Project\n\nThe launch is planned for March.\n")
    assert "committed  readme:" in run("-C", idx, "compile", tmp_path / "README.md").output


def test_pages_count_in_the_singular_when_there_is_one(idx, tmp_path):
    import re

    doc = tmp_path / "letter.md"
    doc.write_text('# Letter\n\nThis letter is from Acme Corp ("Acme") to its staff.\n\n'
                   '# Terms\n\n"Staff" means every employee of Acme.\n', encoding="utf-8")
    out = run("-C", idx, "compile", doc).stdout
    pages = {p.relative_to(idx).as_posix(): p.read_text(encoding="utf-8") for p in (idx / "letter").rglob("*.md")}
    singular_plural = re.compile(r"(?<![\d.,])\b1 (entries|subjects|mentions|parties|terms|names|pages)\b")
    assert not [(path, m.group(0)) for path, text in pages.items() for m in singular_plural.finditer(text)]
    assert not singular_plural.search(out)
    assert any(re.search(r"\b1 (entry|subject|mention|party|term|name)\b", text) for text in pages.values()), pages


def test_eval_output_in_the_index_is_ignored(idx, tmp_path, monkeypatch):
    run("-C", idx, "compile", _memo(tmp_path / "memo.md", "The launch is planned for March."))
    (tmp_path / "qa.jsonl").write_text(json.dumps({"question": "When is the launch?", "answer": "March"}) + "\n")
    monkeypatch.chdir(idx)
    out = run("eval", tmp_path / "qa.jsonl").output
    assert "Report: eval-out/report.md" in out and (idx / "eval-out" / "report.md").is_file()
    assert _git(idx, "status", "--porcelain", "--untracked-files=all") == ""
    assert (idx / ".gitignore").read_text() == "# hti-git eval's default output folder\n/eval-out/\n"


def test_init_adds_the_ignore_file_to_an_index_made_before_it(tmp_path):
    idx = tmp_path / "old"
    run("init", idx)
    _git(idx, "rm", "-q", ".gitignore")
    _git(idx, "commit", "-q", "-m", "an index from before .gitignore")
    assert "Committed 1 file(s)" in run("init", idx).output
    assert (idx / ".gitignore").is_file()


def test_tests_that_need_the_shared_data_fail_in_ci_and_say_why_elsewhere(tmp_path, monkeypatch):
    from tests.support.shared import require_shared

    missing = tmp_path / "no-shared" / "contracts"
    assert require_shared(tmp_path) == tmp_path
    monkeypatch.delenv("HTI_REQUIRE_SHARED", raising=False)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="shared data not found at .*CI must provide it"):
        require_shared(missing)
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match=f"shared data not found at {missing}; set HTI_SHARED"):
        require_shared(missing)


def test_skips_are_reported_with_their_reason():
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert "-rs" in pyproject["tool"]["pytest"]["ini_options"]["addopts"].split()


# 4. The README matches the tool --------------------------------------------------------------------------


@pytest.mark.parametrize("args,message", [
    (["compile"], "hti-git: error: missing argument 'INPUTS...' (see 'hti-git compile --help')"),
    (["ask", "--jsn", "x"], "hti-git: error: no such option '--jsn'. Did you mean '--json'? (see 'hti-git ask --help')"),
    (["--bogus"], "hti-git: error: no such option '--bogus' (see 'hti-git --help')"),
    (["nope"], "hti-git: error: no such command 'nope' (see 'hti-git --help')"),
    (["cache", "nope"], "hti-git: error: no such command 'nope' (see 'hti-git cache --help')"),
    (["compile", "--method", "slow", "x.txt"], "hti-git: error: invalid value for '--method': 'slow' is not one of "
                                               "'auto', 'fast', 'standard' (see 'hti-git compile --help')"),
    (["compile", "--doc", "x", "a.txt", "b.txt"], "hti-git: error: --doc names one document; pass a single file "
                                                  "with it (see 'hti-git compile --help')"),
])
def test_usage_errors_are_one_line_with_a_hint(idx, args, message):
    result = run("-C", idx, *args, ok=False)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [message] and result.stdout == ""


def test_diff_takes_json_like_every_other_command(idx, tmp_path):
    source = _memo(tmp_path / "memo.md", "The launch is planned for March.")
    run("-C", idx, "compile", source)
    _memo(source, "The launch is planned for May.")
    run("-C", idx, "compile", source)
    as_json = json.loads(run("-C", idx, "diff", "HEAD~1", "HEAD", "--json").stdout)
    assert as_json == json.loads(run("-C", idx, "diff", "HEAD~1", "HEAD", "--format", "json").stdout)
    assert [d["doc"] for d in as_json["docs"]] == ["memo"] and not as_json["identical"]
    assert run("-C", idx, "diff", "HEAD~1", "--json", "--format", "md", ok=False).exit_code == 2
    # not the groups, show (it prints pages) or mcp (a server speaking JSON-RPC)
    for name in sorted(set(main.commands) - {"show", "cache", "schema", "mcp"}):
        assert "--json" in run(name, "--help").stdout, name
