"""Renderings of a semantic diff (the dict from review.diff): terminal text and a GitHub comment.

Both return strings; the CLI prints them. Long lists are capped at `limit` items with "N more",
so a 500-subject change stays readable (and the Markdown stays under GitHub's comment limit).
"""

from __future__ import annotations

import re
from typing import Any

import click

from hti_git.review.words import glue, plain

MARKER = "<!-- hti-git-review -->"
GITHUB_COMMENT_MAX = 60_000  # GitHub rejects comments over 65,536 characters
SUBJECT_LISTS = (("added", "added"), ("removed", "removed"), ("renamed", "renamed"), ("changed", "changed"),
                 ("moved", "moved"))


# -- shared helpers --------------------------------------------------------------------------------


def _short(value: Any, n: int = 120) -> str:
    text = " ".join(str(value).split()) if value is not None else "—"
    return text if len(text) <= n else text[: n - 1] + "…"


def _hash(value: Any) -> str:
    text = str(value) if value is not None else "—"
    return text[:19] + "…" if text.startswith("sha256:") and len(text) > 20 else _short(text, 60)


def _tokens(usage: dict[str, Any] | None) -> str:
    if not usage:
        return "—"
    return f"{usage.get('input_tokens', 0):,} in / {usage.get('output_tokens', 0):,} out ({usage.get('calls', 0)} calls)"


def _rel(doc: str, page: str) -> str:
    return page.removeprefix(doc + "/")


def _subject_counts(d: dict[str, Any]) -> str:
    a, b = (d["counts"]["a"] or {}).get("subjects"), (d["counts"]["b"] or {}).get("subjects")
    if a is None:
        return f"{b}"
    if b is None:
        return f"{a}"
    return f"{a} → {b}" if a != b else f"{a}"


def _clip_diff(diff: list[list[str]], n: int) -> list[list[str]]:
    """The first `n` characters' worth of a word diff (changes kept whole when possible)."""
    out, used = [], 0
    for op, text in diff:
        if used + len(text) > n:
            out.append([op, text[: max(0, n - used)] + "…"])
            break
        out.append([op, text])
        used += len(text)
    return out


def _change_lines(change: dict[str, Any], word: Any, width: int, esc: Any = str) -> str | None:
    """One line for a subject change; `word` renders a word diff, `esc` plain text. None if minor."""
    what = change["what"]
    if what in ("title", "summary"):
        return f"{what}: {word(_clip_diff(change['diff'], width))}"
    if what == "aliases":
        parts = [f"+{a}" for a in change["added"]] + [f"-{a}" for a in change["removed"]]
        return "aliases: " + esc(", ".join(parts))
    if what == "value":
        field = esc(change["field"])
        if change["op"] == "changed":
            return f"{field}: {word(_clip_diff(change['diff'], width))}"
        side = change["b"] if change["op"] == "added" else change["a"]
        op = "+" if change["op"] == "added" else "-"
        return f"{field}: {word([[op, _short(side['text'], width)]])}"
    if what == "unverified":
        state = "now unverified" if change["b"] else "now verified"
        return f"{esc(change['field'])}: {state}: {esc(_short(change['text'], 60))}"
    return None


# -- text ------------------------------------------------------------------------------------------


def render_text(diff: dict[str, Any], color: bool = False, limit: int = 200) -> str:
    """Human-readable diff for a terminal; coloured when `color`. Empty when nothing differs."""
    if diff["identical"]:
        return ""

    def style(text: str, **kw: Any) -> str:
        return click.style(text, **kw) if color else text

    def word(segments: list[list[str]]) -> str:
        if not color:
            return plain(segments)
        return glue([(text, text if op == "=" else style(text, fg="red" if op == "-" else "green",
                                                          strikethrough=op == "-"))
                     for op, text in segments])

    a, b = diff["a"], diff["b"]
    t = diff["totals"]
    lines = [style(f"hti-git diff {a['rev']} ({(a['commit'] or 'empty')[:10]}) → {b['rev']} "
                   f"({(b['commit'] or 'empty')[:10]})", bold=True),
             f"{len(diff['docs'])} document(s) differ: {t['docs_added']} added, {t['docs_removed']} removed, "
             f"{t['docs_changed']} changed; {t['pages_changed']} file(s) changed"]
    for d in diff["docs"]:
        doc = d["doc"]
        lines += ["", style(f"{doc}", bold=True) + f"  {d['status']}: {d['change']}"]
        lines.append(f"  subjects: {_subject_counts(d)}   tokens: A {_tokens(d['usage']['a'])} → B {_tokens(d['usage']['b'])}")
        for p in d["provenance"]:
            lines.append(f"  provenance {p['key']}: {_hash(p['a'])} → {_hash(p['b'])}")
        lines += [f"  {line}" for line in _schema_lines(d["schema"])]
        for s in d["summaries"]:
            lines.append(f"  summary of {_rel(doc, s['page'])}: {word(s['diff'])}")
        for c in d["categories"]["added"]:
            lines.append(style(f"  + category {c['title']}  ({_rel(doc, c['page'])})", fg="green"))
        for c in d["categories"]["removed"]:
            lines.append(style(f"  - category {c['title']}  ({_rel(doc, c['page'])})", fg="red"))
        subjects = d["subjects"]
        for key, _ in SUBJECT_LISTS:
            items = subjects[key]
            for item in items[:limit]:
                lines += _text_subject(doc, key, item, style, word)
            if len(items) > limit:
                lines.append(f"  … and {len(items) - limit} more {key}")
        if subjects["shifted"]:
            lines.append(style(f"  {len(subjects['shifted'])} subject(s) with only evidence spans or keywords "
                               "shifted (text unchanged)", dim=True))
    for f in diff["other_files"]:
        lines.append(f"{f['status']} {f['path']}")
    return "\n".join(lines) + "\n"


def _text_subject(doc: str, key: str, item: dict[str, Any], style: Any, word: Any) -> list[str]:
    if key == "added":
        return [style(f"  + {item['title']}", fg="green") + f"  ({_rel(doc, item['page'])})"]
    if key == "removed":
        return [style(f"  - {item['title']}", fg="red") + f"  ({_rel(doc, item['page'])})"]
    if key == "moved":
        return [f"  > {item['title']}  moved {_rel(doc, item['page_a'])} → {_rel(doc, item['page'])}"]
    if key == "renamed":
        head = (style(f"  ~ {item['a']['title']} → {item['b']['title']}", fg="yellow")
                + f"  (renamed; matched by {', '.join(item['matched_by'])})")
    else:
        head = style(f"  ~ {item['title']}", fg="yellow") + f"  ({_rel(doc, item['page'])})"
    out = [head]
    for change in item["changes"]:
        if key == "renamed" and change["what"] == "title":
            continue
        line = _change_lines(change, word, 240)
        if line:
            out.append(f"      {line}")
    return out


def _schema_lines(schema: dict[str, Any] | None) -> list[str]:
    if not schema:
        return []
    out = []
    out += [f"schema: + category {c}" for c in schema["categories_added"]]
    out += [f"schema: - category {c}" for c in schema["categories_removed"]]
    out += [f"schema: category {r['a']} → {r['b']}" for r in schema["categories_renamed"]]
    out += [f"schema: + field {f['category']}.{f['field']}" for f in schema["fields_added"]]
    out += [f"schema: - field {f['category']}.{f['field']}" for f in schema["fields_removed"]]
    out += [f"schema: field {f['category']}.{f['a']} → {f['b']}" for f in schema["fields_renamed"]]
    out += [f"schema: {o['key']}: {_short(o['a'], 40)} → {_short(o['b'], 40)}" for o in schema["other"]]
    return out


# -- Markdown (a GitHub pull-request comment) ------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_~\[\]<>|#])")


def _md(text: Any) -> str:
    """Inline text safe in Markdown and in a table cell: specials escaped, one line."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def _code(text: Any) -> str:
    """An inline code span (backslash escapes do not work inside one, so backticks are replaced)."""
    return "`" + " ".join(str(text).split()).replace("`", "'") + "`"


def _md_word(segments: list[list[str]]) -> str:
    # A marked-up segment always gets a space before it: "Law**;**" would not open the emphasis.
    return glue([(text if op == "=" else f" {text}" if text else "",
                  _md(text) if op == "=" else f"~~{_md(text)}~~" if op == "-" else f"**{_md(text)}**")
                 for op, text in segments])


def render_markdown(diff: dict[str, Any], limit: int = 25) -> str:
    """A GitHub-flavoured comment: a summary table, then a collapsible section per document.

    Starts with the hidden marker a CI job uses to find and update its own comment.
    """
    text = _markdown(diff, limit)
    while len(text) > GITHUB_COMMENT_MAX and limit > 1:
        limit //= 2
        text = _markdown(diff, limit)
    return text


def _markdown(diff: dict[str, Any], limit: int) -> str:
    a, b = diff["a"], diff["b"]
    out = [MARKER, f"### hti-git: index changes {_code(a['rev'])} → {_code(b['rev'])}", ""]
    if diff["identical"]:
        out.append(f"No index changes between {_code(a['rev'])} and {_code(b['rev'])}.")
        return "\n".join(out) + "\n"
    t = diff["totals"]
    out += [f"{len(diff['docs'])} document(s) differ ({t['docs_added']} added, {t['docs_removed']} removed, "
            f"{t['docs_changed']} changed), {t['pages_changed']} file(s) changed. "
            f"Commits `{(a['commit'] or 'empty')[:10]}` → `{(b['commit'] or 'empty')[:10]}`.", ""]
    if diff["docs"]:
        out += ["| Document | Status | Change | Subjects | Added | Removed | Renamed | Changed | Files | Tokens A → B |",
                "|---|---|---|---:|---:|---:|---:|---:|---:|---|"]
        for d in diff["docs"]:
            s = d["subjects"]
            out.append(" | ".join([
                f"| {_code(d['doc'])}", d["status"], _md(d["change"]), _subject_counts(d),
                str(len(s["added"])), str(len(s["removed"])), str(len(s["renamed"])), str(len(s["changed"])),
                str(d["counts"]["pages_changed"]),
                f"{_md(_tokens(d['usage']['a']))} → {_md(_tokens(d['usage']['b']))} |",
            ]))
        out.append("")
    for d in diff["docs"]:
        out += _md_doc(d, limit)
    if diff["other_files"]:
        out += ["<details><summary>Other files</summary>", ""]
        out += [f"- `{f['status']}` {_code(f['path'])}" for f in diff["other_files"][:limit]]
        if len(diff["other_files"]) > limit:
            out.append(f"- … and {len(diff['other_files']) - limit} more")
        out += ["", "</details>", ""]
    out.append("<sub>Generated by `hti-git diff --format md`; full detail: `hti-git diff --format json`.</sub>")
    return "\n".join(out) + "\n"


def _md_doc(d: dict[str, Any], limit: int) -> list[str]:
    doc = d["doc"]
    out = [f"<details><summary><b>{_html(doc)}</b> — {_html(d['status'])}: {_html(d['change'])}</summary>", ""]
    if d["provenance"]:
        out += ["**Provenance**", "", "| Key | A | B |", "|---|---|---|"]
        out += [f"| {_code(p['key'])} | {_md(_hash(p['a']))} | {_md(_hash(p['b']))} |" for p in d["provenance"]]
        out.append("")
    out.append(f"Tokens: A {_md(_tokens(d['usage']['a']))} → B {_md(_tokens(d['usage']['b']))}.")
    out.append("")
    schema = _schema_lines(d["schema"])
    if schema:
        out += ["**Schema**", ""] + [f"- {_md(line.removeprefix('schema: '))}" for line in schema[:limit]]
        if len(schema) > limit:
            out.append(f"- … and {len(schema) - limit} more")
        out.append("")
    if d["summaries"]:
        out += ["**Summaries**", ""]
        for s in d["summaries"][:limit]:
            out.append(f"- *{_md(s['title'])}* ({_code(_rel(doc, s['page']))}): {_md_word(s['diff'])}")
        if len(d["summaries"]) > limit:
            out.append(f"- … and {len(d['summaries']) - limit} more")
        out.append("")
    cats = d["categories"]
    if cats["added"] or cats["removed"]:
        out += ["**Category pages**", ""]
        out += [f"- added *{_md(c['title'])}* ({_code(_rel(doc, c['page']))})" for c in cats["added"][:limit]]
        out += [f"- removed *{_md(c['title'])}* ({_code(_rel(doc, c['page']))})" for c in cats["removed"][:limit]]
        hidden = max(0, len(cats["added"]) - limit) + max(0, len(cats["removed"]) - limit)
        if hidden:
            out.append(f"- … and {hidden} more")
        out.append("")
    s = d["subjects"]
    for key, label in SUBJECT_LISTS:
        items = s[key]
        if not items:
            continue
        out += [f"**Subjects {label} ({len(items)})**", ""]
        for item in items[:limit]:
            out += _md_subject(doc, key, item)
        if len(items) > limit:
            out.append(f"- … and {len(items) - limit} more")
        out.append("")
    if s["shifted"]:
        out += [f"{len(s['shifted'])} subject(s) only had evidence spans or keywords shift (text unchanged).", ""]
    if d["status"] in ("added", "removed"):
        counts = d["counts"]["b"] if d["status"] == "added" else d["counts"]["a"]
        out += [f"{counts['subjects'] if counts else 0} subjects in "
                f"{counts['categories'] if counts else 0} categories.", ""]
    out += ["</details>", ""]
    return out


def _md_subject(doc: str, key: str, item: dict[str, Any]) -> list[str]:
    if key == "added":
        summary = f" — {_md(_short(item['summary'], 160))}" if item.get("summary") else ""
        return [f"- **{_md(item['title'])}** ({_code(_rel(doc, item['page']))}){summary}"]
    if key == "removed":
        return [f"- ~~{_md(item['title'])}~~ ({_code(_rel(doc, item['page']))})"]
    if key == "moved":
        return [f"- {_md(item['title'])}: {_code(_rel(doc, item['page_a']))} → {_code(_rel(doc, item['page']))}"]
    if key == "renamed":
        head = (f"- ~~{_md(item['a']['title'])}~~ → **{_md(item['b']['title'])}** "
                f"(matched by {', '.join(item['matched_by'])})")
    else:
        head = f"- **{_md(item['title'])}** ({_code(_rel(doc, item['page']))})"
    lines = [head]
    shown = 0
    changes = [c for c in item["changes"] if not (key == "renamed" and c["what"] == "title")]
    for change in changes:
        line = _change_lines(change, _md_word, 300, _md)
        if line is None:
            continue
        if shown == 6:
            lines.append("  - …")
            break
        lines.append(f"  - {line}")
        shown += 1
    return lines


def _html(text: Any) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
