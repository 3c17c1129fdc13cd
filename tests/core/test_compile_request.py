"""`compile`'s options, checked in the library (compile.batch.CompileRequest), not in the CLI."""

from __future__ import annotations

import pytest

from hti_git.compile.batch import CompileRequest, run_compile
from hti_git.config import Settings
from hti_git.errors import OptionError, UsageError


def _files(tmp_path, *names: str) -> list[str]:
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(f"# {name}\n\nThe launch of {name} is planned for March.\n")
    return [str(tmp_path / n) for n in names]


def test_doc_names_one_file_only(tmp_path):
    a, b = _files(tmp_path, "a.txt", "b.txt")
    for inputs in ([a, b], [str(tmp_path)]):
        with pytest.raises(OptionError, match="--doc names one document"):
            CompileRequest(inputs, doc="mine").resolve(Settings())
    assert CompileRequest([a], doc="mine").resolve(Settings()).request.doc == "mine"


@pytest.mark.parametrize("option", [{"schema_file": "schema.yaml"}, {"max_tokens": 1000}])
def test_standard_only_options_are_refused_for_fast(tmp_path, option):
    with pytest.raises(OptionError, match="apply to the standard method only"):
        CompileRequest(_files(tmp_path, "a.txt"), method="fast", **option).resolve(Settings())


def test_option_errors_are_usage_errors():
    assert issubclass(OptionError, UsageError) and OptionError("x").exit_code == 2


def test_auto_without_a_model_compiles_fast_and_says_why(tmp_path):
    plan = CompileRequest(_files(tmp_path, "a.txt")).resolve(Settings())
    assert plan.method == "fast" and plan.standard is None
    assert "HTI_MODEL" in plan.fast_because
    assert CompileRequest(_files(tmp_path, "a.txt"), method="fast").resolve(Settings()).fast_because is None


def test_model_flag_asks_for_standard_and_jobs_bound_the_calls(tmp_path):
    plan = CompileRequest(_files(tmp_path, "a.txt"), model="gpt-5-mini", jobs=3, max_tokens=500).resolve(Settings())
    assert plan.method == "standard" and plan.fast_because is None
    assert plan.settings.model == "gpt-5-mini" and plan.settings.concurrency == 3
    assert plan.standard.max_tokens == 500


def test_one_file_is_what_expansion_reads_as_one_file(tmp_path):
    a, b = _files(tmp_path, "a.txt", "b.txt")
    bracketed = _files(tmp_path, "c[1].txt")[0]  # a file, though its name has a wildcard
    assert CompileRequest([a]).one_file and CompileRequest([bracketed]).one_file
    assert not CompileRequest([a, b]).one_file
    assert not CompileRequest([str(tmp_path)]).one_file
    assert not CompileRequest([str(tmp_path / "*.txt")]).one_file


def test_the_batch_reports_what_it_expanded_and_its_total(index_repo, tmp_path):
    inputs = _files(tmp_path / "docs", "a.txt", "sub/b.md") + [str(tmp_path / "none-*.pdf")]
    plan = CompileRequest([str(tmp_path / "docs"), inputs[2]]).resolve(Settings())
    batch = run_compile(index_repo, plan)
    assert batch.expanded == [inputs[0], inputs[1]]
    assert sorted(r.doc for r in batch.results) == ["a", "b"]
    assert [f["source"] for f in batch.failures] == [inputs[2]] and batch.total == 3
