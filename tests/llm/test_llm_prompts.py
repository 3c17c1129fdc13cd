import pytest

from hti_git.llm.prompts import TemplateError, load_template, packaged_templates_dir, split_messages


def test_packaged_check_template():
    template = load_template("check")
    assert template.path.parent == packaged_templates_dir()
    assert template.sha256.startswith("sha256:")
    messages = template.messages()
    assert [m["role"] for m in messages] == ["system", "user"]
    assert '{"ok": true}' in messages[1]["content"]


def test_repo_template_overrides_packaged(tmp_path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "check.md").write_text("---user---\nPing {{ who }}\n", encoding="utf-8")
    template = load_template("check", tmp_path)
    assert template.path == tmp_path / "templates" / "check.md"
    assert template.sha256 != load_template("check").sha256
    assert template.messages(who="you") == [{"role": "user", "content": "Ping you"}]


def test_render_is_single_pass_and_missing_vars_fail(tmp_path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.md").write_text("A {{a}} B {{b}}", encoding="utf-8")
    template = load_template("t", tmp_path)
    assert template.variables == ["a", "b"]
    assert template.render(a="{{b}}", b=1) == "A {{b}} B 1"
    with pytest.raises(TemplateError, match="needs b"):
        template.render(a=1)


def test_split_messages():
    text = "intro\n---system---\nsys\n---user---\nq1\n---assistant---\na1\n---user---\nq2\n"
    assert split_messages(text) == [
        {"role": "user", "content": "intro"},
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "q2"},
    ]
    assert split_messages("just text") == [{"role": "user", "content": "just text"}]
    assert split_messages("a ---user--- inline") == [{"role": "user", "content": "a ---user--- inline"}]


def test_unknown_and_unsafe_names():
    with pytest.raises(TemplateError, match="no prompt template"):
        load_template("nope")
    with pytest.raises(ValueError):
        load_template("../secrets")
