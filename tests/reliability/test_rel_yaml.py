"""YAML safety: hti.yaml, schema.yaml and front-matter are safe-loaded; tags and alias bombs refused.

Commands that could blow up run as subprocesses with a 1 GB address-space limit and a timeout, so
a regression fails the test instead of taking the machine down.
"""

from __future__ import annotations

import resource
import subprocess

import pytest
from rel_support import CONTRACT, git, hti_command

from hti_git.compile.pipeline import compile_path
from hti_git.compile.schema import load_schema_file
from hti_git.config import read_config_file
from hti_git.errors import ConfigError, PageFormatError, UsageError
from hti_git.index.page import parse_page
from hti_git.review.verify import verify_snapshot
from hti_git.store import IndexRepo
from hti_git.workspace import open_index

DOC = "slingerbaginc-05-27-2020-ex-10-7-consulting-agreement"
PYTHON_TAG = '!!python/object/apply:os.system ["touch {marker}"]'
LAUGHS = """a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def _limited():
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def run_bounded(repo, *args, timeout=30) -> subprocess.CompletedProcess:
    return subprocess.run(hti_command(*args), cwd=repo, capture_output=True, text=True, timeout=timeout,
                          preexec_fn=_limited)


def _one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode not in (0, -9), proc
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.startswith("hti-git: error:")]
    assert lines, proc.stderr
    assert any(all(n in line for n in needles) for line in lines), lines


@pytest.fixture
def compiled(index_path):
    repo = IndexRepo(index_path)
    compile_path(repo, CONTRACT, open_index(index_path)[1], method="fast")
    repo.close()
    return index_path


# -- hti.yaml ------------------------------------------------------------------------------------

def test_python_tag_in_hti_yaml_is_refused_and_never_run(compiled, tmp_path):
    marker = tmp_path / "PWNED"
    (compiled / "hti.yaml").write_text("method: fast\nmodel: " + PYTHON_TAG.format(marker=marker) + "\n")
    proc = run_bounded(compiled, "ls")
    _one_line_error(proc, "hti.yaml", "invalid YAML")
    assert not marker.exists()


def test_alias_bomb_in_hti_yaml_is_refused(compiled):
    (compiled / "hti.yaml").write_text(LAUGHS + "model: *i\n")
    _one_line_error(run_bounded(compiled, "ask", "Who are the parties?"), "hti.yaml", "aliases")
    with pytest.raises(ConfigError, match="aliases"):
        read_config_file(compiled / "hti.yaml")


# -- front-matter ----------------------------------------------------------------------------------

def _plant(repo_path, rel: str, text: str) -> None:
    (repo_path / rel).write_text(text)
    git(repo_path, "commit", "-q", "-am", f"hand edit {rel}")


def test_python_tag_in_front_matter_is_refused(compiled, tmp_path):
    marker = tmp_path / "PWNED"
    page = f"---\nkind: root\ntitle: {PYTHON_TAG.format(marker=marker)}\n---\n\n# x\n"
    with pytest.raises(PageFormatError, match="invalid front-matter"):
        parse_page("d/index.md", page)
    _plant(compiled, f"{DOC}/index.md", page)
    _one_line_error(run_bounded(compiled, "show", f"{DOC}/index.md"), "index.md", "front-matter")
    proc = run_bounded(compiled, "verify")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "front-matter" in proc.stdout + proc.stderr
    assert not marker.exists()


def test_alias_bomb_in_front_matter_is_refused(compiled):
    rel = f"{DOC}/parties/index.md"
    original = (compiled / rel).read_text()
    bomb = original.replace("---\n", "---\n" + LAUGHS.replace("\ni:", "\nbomb:"), 1)
    bomb = bomb.replace("\ntitle: ", "\ntitle: *bomb\nold_title: ", 1)
    with pytest.raises(PageFormatError, match="aliases"):
        parse_page(rel, bomb)
    _plant(compiled, rel, bomb)
    for args in (("show", rel), ("ask", "--method", "fast", "Who are the parties?"), ("verify",),
                 ("diff", "HEAD~1", "HEAD"), ("ls",)):
        proc = run_bounded(compiled, *args)
        assert proc.returncode in (0, 1), (args, proc.stderr[-500:])
        assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, (args, proc.stderr[-2000:])


def test_deeply_nested_front_matter_is_refused():
    page = "---\ntitle: " + "[" * 5000 + "]" * 5000 + "\n---\n\nbody\n"
    with pytest.raises(PageFormatError, match="depth"):
        parse_page("d/index.md", page)


# -- schema.yaml -----------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["tag", "laughs"])
def test_hostile_schema_yaml_is_reported_not_run(compiled, tmp_path, kind):
    marker = tmp_path / "PWNED"
    rel = f"{DOC}/schema.yaml"
    if kind == "tag":
        text = "hti: 1\nmethod: fast\ncategories: " + PYTHON_TAG.format(marker=marker) + "\n"
    else:
        text = LAUGHS + "hti: 1\nmethod: fast\ncategories: *i\n"
    _plant(compiled, rel, text)
    proc = run_bounded(compiled, "verify")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "schema.yaml" in proc.stdout and "invalid YAML" in proc.stdout
    proc = run_bounded(compiled, "diff", "HEAD~1", "HEAD", "--format", "json")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    with pytest.raises(UsageError, match="invalid YAML"):
        load_schema_file(compiled / rel)  # what `compile --schema FILE` reads
    repo = IndexRepo(compiled)
    assert not verify_snapshot(repo.snapshot()).ok
    repo.close()
    assert not marker.exists()
