"""Repository states: detached HEAD, unborn branch, bare repository, dirty tree, unrelated files."""

from __future__ import annotations

import json
import shutil

import pytest
from rel_support import CONTRACT, assert_fsck_clean, cli, git

Q = "Which state's law governs this agreement?"


def _error_line(proc, *needles: str) -> None:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert any(line.startswith("hti-git: error:") and all(n in line for n in needles) for line in lines), lines


@pytest.fixture
def compiled(index_path):
    done = cli(index_path, "compile", "--method", "fast", "--doc", "first", str(CONTRACT))
    assert done.returncode == 0, done.stderr
    return index_path


def test_detached_head(compiled, tmp_path):
    git(compiled, "checkout", "-q", "--detach")
    head = git(compiled, "rev-parse", "HEAD").strip()
    _error_line(cli(compiled, "compile", "--method", "fast", "--doc", "second", str(CONTRACT)), "detached")
    for args in (("ask", Q), ("ls",), ("verify",), ("log",), ("show", "first/index.md")):
        proc = cli(compiled, *args)
        assert proc.returncode == 0, (args, proc.stderr)
    proc = cli(compiled, "compile", "--method", "fast", "--doc", "second", "--branch", "review", str(CONTRACT))
    assert proc.returncode == 0, proc.stderr
    # The new branch starts from the detached commit: nothing of the index is dropped from it.
    assert git(compiled, "rev-parse", "review~1").strip() == head
    files = git(compiled, "ls-tree", "--name-only", "review").split()
    assert {"hti.yaml", "templates", "first", "second"} <= set(files)
    assert git(compiled, "rev-parse", "HEAD").strip() == head  # still detached, untouched
    assert git(compiled, "status", "--porcelain") == ""
    assert_fsck_clean(compiled)


def test_unborn_branch_of_a_plain_git_repository(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    git(plain, "init", "-q", "-b", "main")
    # not an index until `hti-git init` makes it one: every command says so and writes nothing
    for args in (("ask", Q), ("ls",), ("log",), ("show",), ("verify",), ("compile", "--method", "fast", str(CONTRACT))):
        _error_line(cli(plain, *args), "not an hti-git index", "hti-git init")
    assert git(plain, "status", "--porcelain", "--untracked-files=all") == ""
    assert not (plain / ".git" / "hti").exists()
    assert cli(plain, "init").returncode == 0  # adopts the unborn branch
    proc = cli(plain, "compile", "--method", "fast", str(CONTRACT))
    assert proc.returncode == 0, proc.stderr
    assert git(plain, "rev-list", "--count", "HEAD").strip() == "2"
    assert git(plain, "status", "--porcelain") == ""
    assert cli(plain, "ask", Q).returncode == 0


def test_bare_repository_serves_read_only_commands(compiled, tmp_path):
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(compiled), str(bare))
    before = git(bare, "for-each-ref")
    for args in (("ask", "--json", Q), ("ls", "--json"), ("show",), ("show", "first/index.md"), ("log",),
                 ("verify",), ("diff", "HEAD~1", "HEAD")):
        proc = cli(bare, *args)
        assert proc.returncode == 0, (args, proc.stderr)
    assert json.loads(cli(bare, "ask", "--json", Q).stdout)["found"]
    _error_line(cli(bare, "compile", "--method", "fast", "--doc", "second", str(CONTRACT)), "bare")
    assert git(bare, "for-each-ref") == before
    assert_fsck_clean(bare)


def test_dirty_tree_outside_the_index_is_left_untouched(compiled, tmp_path):
    (compiled / "README.md").write_text("committed readme\n")
    (compiled / "notes.txt").write_text("committed notes\n")
    git(compiled, "add", "README.md", "notes.txt")
    git(compiled, "commit", "-q", "-m", "user files")
    (compiled / "README.md").write_text("edited, not staged\n")
    (compiled / "notes.txt").write_text("edited and staged\n")
    git(compiled, "add", "notes.txt")
    (compiled / "notes.txt").write_text("edited and staged, then edited again\n")
    (compiled / "scratch").mkdir()
    (compiled / "scratch" / "draft.md").write_text("untracked\n")
    status = git(compiled, "status", "--porcelain")
    staged = git(compiled, "diff", "--cached")
    changed = tmp_path / "first.txt"
    changed.write_text(CONTRACT.read_text().replace("New York", "Delaware"))
    proc = cli(compiled, "compile", "--method", "fast", "--doc", "first", "--replace", str(changed))
    assert proc.returncode == 0 and "committed" in proc.stdout, proc.stderr
    assert (compiled / "README.md").read_text() == "edited, not staged\n"
    assert (compiled / "notes.txt").read_text() == "edited and staged, then edited again\n"
    assert (compiled / "scratch" / "draft.md").read_text() == "untracked\n"
    assert git(compiled, "status", "--porcelain") == status
    assert git(compiled, "diff", "--cached") == staged
    assert all(p.startswith(("first/", "catalog/"))
               for p in git(compiled, "show", "--name-only", "--format=", "HEAD").split())


def test_dirty_document_folder_is_refused(compiled, tmp_path):
    (compiled / "first" / "index.md").write_text("my own edit\n")
    _error_line(cli(compiled, "compile", "--method", "fast", "--doc", "first", "--replace", str(_changed(tmp_path))),
                "uncommitted")
    assert (compiled / "first" / "index.md").read_text() == "my own edit\n"


def _changed(tmp_path):
    path = tmp_path / "first.txt"
    path.write_text(CONTRACT.read_text().replace("New York", "Delaware"))
    return path


def test_unrelated_files_are_ignored_and_never_replaced(compiled, tmp_path):
    (compiled / "src").mkdir()
    (compiled / "src" / "app.py").write_text("print('app')\n")
    (compiled / "docs" / "guide").mkdir(parents=True)
    (compiled / "docs" / "guide" / "index.md").write_text("---\ntitle: Guide\n---\n\n# Guide\n")
    (compiled / "contract").mkdir()
    (compiled / "contract" / "notes.md").write_text("Our own notes about the contract.\n")
    git(compiled, "add", "src", "docs", "contract")
    git(compiled, "commit", "-q", "-m", "unrelated files")
    ls = json.loads(cli(compiled, "ls", "--json").stdout)
    assert [row["doc"] for row in ls] == ["first"]
    assert cli(compiled, "verify").returncode == 0
    assert json.loads(cli(compiled, "ask", "--json", Q).stdout)["found"]
    source = tmp_path / "contract.txt"
    shutil.copy(CONTRACT, source)
    proc = cli(compiled, "compile", "--method", "fast", str(source))
    # A folder that is not an index must not be replaced by one: refuse and name --doc.
    _error_line(proc, "contract already exists", "--doc")
    assert (compiled / "contract" / "notes.md").read_text() == "Our own notes about the contract.\n"
    assert git(compiled, "ls-tree", "-r", "--name-only", "HEAD", "contract").split() == ["contract/notes.md"]
    proc = cli(compiled, "compile", "--method", "fast", "--doc", "contract-index", str(source))
    assert proc.returncode == 0, proc.stderr
    for rel in ("src/app.py", "docs/guide/index.md", "contract/notes.md"):
        assert git(compiled, "log", "-1", "--format=%s", "--", rel).strip() == "unrelated files"
    assert git(compiled, "status", "--porcelain") == ""


def test_a_file_with_the_document_name_is_not_replaced(compiled, tmp_path):
    (compiled / "manual").write_text("a file without extension\n")
    git(compiled, "add", "manual")
    git(compiled, "commit", "-q", "-m", "manual")
    source = tmp_path / "manual.txt"
    shutil.copy(CONTRACT, source)
    _error_line(cli(compiled, "compile", "--method", "fast", str(source)), "manual already exists")
    assert (compiled / "manual").read_text() == "a file without extension\n"
