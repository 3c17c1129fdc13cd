"""Prompt templates: Markdown files in the index repo's `templates/`, else the packaged ones.

Format of `templates/<name>.md`:

    ---system---
    You extract subjects from contracts. ...
    ---user---
    Schema: {{schema}}
    Text:
    {{chunk}}

A line that is exactly `---system---`, `---user---` or `---assistant---` starts a message with
that role (several user/assistant turns make few-shot examples). Text before the first marker,
or a file with no markers, is one user message. `{{name}}` (spaces allowed inside the braces) is
replaced by the variable `name`; a variable the template uses but the caller does not give is an
error. Substitution is single-pass, so braces inside values (document text, JSON) stay literal.
The rendered text is part of the messages, so editing a template changes the cache key.
`fence` wraps document text as data in a prompt, for compile and ask alike.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hti_git
from hti_git.errors import ConfigError

TEMPLATES_DIR = "templates"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_VAR = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_MARKER = re.compile(r"^---(system|user|assistant)---[ \t]*$", re.MULTILINE)


class TemplateError(ConfigError):
    """A prompt template is missing, or uses a variable the caller did not supply."""


@dataclass(frozen=True)
class Template:
    """One prompt template: its name, text, sha256 ("sha256:<hex>") and where it came from."""

    name: str
    text: str
    sha256: str
    path: Path | None = None

    @property
    def variables(self) -> list[str]:
        """Variable names the template uses, in first-use order."""
        return list(dict.fromkeys(_VAR.findall(self.text)))

    def render(self, **values: Any) -> str:
        """The template text with every `{{var}}` replaced (str() of the value)."""
        missing = [v for v in self.variables if v not in values]
        if missing:
            raise TemplateError(f"template {self.name!r} needs {', '.join(missing)}")
        return _VAR.sub(lambda m: str(values[m.group(1)]), self.text)

    def messages(self, **values: Any) -> list[dict]:
        """Chat messages from the template's ---role--- sections (empty sections dropped).

        The template is split into messages *before* values are substituted: a value (document
        text, a page, a question) holding a line like `---system---` stays inside its message
        instead of starting a new one with another role.
        """
        self.render(**values)  # checks every variable is given
        sections = _sections(self.text)
        rendered = [(role, _VAR.sub(lambda m: str(values[m.group(1)]), body)) for role, body in sections]
        return [{"role": role, "content": body.strip()} for role, body in rendered if body.strip()]


def _sections(text: str) -> list[tuple[str, str]]:
    """(role, raw body) for each ---role--- section of `text`; text before any marker is user."""
    markers = list(_MARKER.finditer(text))
    sections: list[tuple[str, str]] = []
    head = text[: markers[0].start()] if markers else text
    if head.strip():
        sections.append(("user", head))
    for i, marker in enumerate(markers):
        end = markers[i + 1].start() if i + 1 < len(markers) else len(text)
        sections.append((marker.group(1), text[marker.end() : end]))
    return sections


def split_messages(text: str) -> list[dict]:
    """[{"role", "content"}, ...] from text with ---system---/---user---/---assistant--- markers."""
    return [{"role": role, "content": body.strip()} for role, body in _sections(text) if body.strip()]


def packaged_templates_dir() -> Path:
    """Templates shipped with hti-git: inside the package (wheel) or the repo root (editable)."""
    inside = Path(hti_git.__file__).parent / TEMPLATES_DIR
    if inside.is_dir():
        return inside
    return Path(hti_git.__file__).parent.parent / TEMPLATES_DIR


def load_template(name: str, repo_root: Path | None = None) -> Template:
    """Template `name` from `<repo_root>/templates/<name>.md`, else the packaged one."""
    if not _NAME.match(name):
        raise ValueError(f"bad template name {name!r}")
    candidates = []
    if repo_root is not None:
        candidates.append(Path(repo_root) / TEMPLATES_DIR / f"{name}.md")
    candidates.append(packaged_templates_dir() / f"{name}.md")
    for path in candidates:
        if path.is_file():
            data = path.read_bytes()
            return Template(
                name=name,
                text=data.decode("utf-8"),
                sha256="sha256:" + hashlib.sha256(data).hexdigest(),
                path=path,
            )
    raise TemplateError(f"no prompt template {name!r} (looked in {', '.join(str(p) for p in candidates)})")


def fence(text: str) -> str:
    """Document text wrapped as data; a closing tag inside the text cannot end the fence."""
    text = re.sub(r"<(?=/?\s*document\s*>)", "\u2039", text, flags=re.I)
    return f"<document>\n{text}\n</document>"
