"""The schema a standard compile fills in: an overview, categories (nested) and their fields.

A schema comes from discovery (the model proposes it), from a team's reviewed file
(`--schema FILE`), or from the index itself on a recompile of an edited source (so an edit never
reshuffles the categories). Whatever its origin it is validated here: non-empty, unique slugs,
bounded counts, so every later stage can trust it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml.error import YAMLError

from hti_git.errors import UsageError
from hti_git.index.page import dump_yaml, safe_yaml
from hti_git.index.slug import slugify, unique_slug
from hti_git.text import clean_line

MAX_CATEGORIES = 12  # per level: a category listing is one page
MAX_FIELDS = 8  # per category: a subject stays small (paper §3.2: a fixed cap)
MAX_DEPTH = 3
NAME_CHARS = 80
DESCRIPTION_CHARS = 300
ENVELOPE = ("hti", "method")  # keys schema.yaml carries besides the schema itself


@dataclass
class FieldSpec:
    name: str
    description: str = ""


@dataclass
class CategorySpec:
    name: str
    slug: str
    description: str = ""
    fields: list[FieldSpec] = field(default_factory=list)
    children: list[CategorySpec] = field(default_factory=list)


@dataclass
class Schema:
    """What to record about a document: `categories` of subjects, each with `fields`."""

    overview: str
    categories: list[CategorySpec]

    def to_dict(self) -> dict[str, Any]:
        """Plain data in a fixed key order: what schema.yaml holds and provenance hashes."""

        def category(c: CategorySpec) -> dict[str, Any]:
            out: dict[str, Any] = {"name": c.name, "slug": c.slug, "description": c.description,
                                   "fields": [{"name": f.name, "description": f.description} for f in c.fields]}
            if c.children:
                out["categories"] = [category(k) for k in c.children]
            return out

        return {"overview": self.overview, "categories": [category(c) for c in self.categories]}

    def keyed(self) -> dict[str, CategorySpec]:
        """Category key (slug path such as 'clauses/termination') -> category, in schema order."""
        out: dict[str, CategorySpec] = {}

        def walk(items: list[CategorySpec], prefix: str) -> None:
            for c in items:
                key = f"{prefix}/{c.slug}" if prefix else c.slug
                out[key] = c
                walk(c.children, key)

        walk(self.categories, "")
        return out

    def prompt_text(self) -> str:
        """The schema as the extraction prompt shows it: one line per category that holds subjects."""
        lines = [f"Overview: {self.overview}" if self.overview else "", "Categories (key: description):"]
        described: set[tuple[str, str]] = set()
        for key, c in self.keyed().items():
            if not c.fields:
                continue
            # every extraction call repeats this, so nothing is said twice: a name its key already
            # spells is left out, and a field described above (same name, same words) is named only
            name = "" if c.slug == slugify(c.name, 40) else f" {c.name}."
            desc = f" {c.description}" if c.description else ""
            fields = []
            for f in c.fields:
                said = (f.name, f.description) in described or not f.description
                fields.append(f.name if said else f"{f.name} ({f.description})")
                described.add((f.name, f.description))
            lines.append(f"- {key}:{name}{desc} Fields: {'; '.join(fields)}")
        return "\n".join(x for x in lines if x)


def schema_from_data(data: Any, *, strict: bool = False, notes: list[str] | None = None) -> Schema:
    """A validated Schema from plain data (a model reply, or a parsed schema.yaml).

    strict (a file a person wrote): any problem is a UsageError. Otherwise (a model reply) the
    schema is repaired where it can be — duplicates merged, counts cut, with a note each — and only
    an empty result is an error (ValueError).
    """
    notes = notes if notes is not None else []

    def problem(message: str) -> None:
        if strict:
            raise UsageError(f"schema: {message}")
        notes.append(f"schema: {message}")

    if not isinstance(data, dict):
        raise (UsageError if strict else ValueError)("schema: expected a mapping with 'categories'")
    data = {k: v for k, v in data.items() if k not in ENVELOPE}

    def fields_of(items: Any, where: str) -> list[FieldSpec]:
        out: list[FieldSpec] = []
        seen: set[str] = set()
        for item in items if isinstance(items, list) else []:
            raw = item.get("name") if isinstance(item, dict) else item
            name = clean_line(raw, NAME_CHARS)
            if not name:
                problem(f"{where}: a field has no name")
                continue
            if slugify(name) in seen:
                problem(f"{where}: field {name!r} appears twice")
                continue
            if len(out) >= MAX_FIELDS:
                problem(f"{where}: more than {MAX_FIELDS} fields; {name!r} dropped")
                continue
            seen.add(slugify(name))
            desc = clean_line(item.get("description") if isinstance(item, dict) else "", DESCRIPTION_CHARS)
            out.append(FieldSpec(name, desc))
        return out

    def categories_of(items: Any, depth: int, where: str) -> list[CategorySpec]:
        out: list[CategorySpec] = []
        taken: set[str] = set()
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                problem(f"{where}: a category is not a mapping")
                continue
            name = clean_line(item.get("name"), NAME_CHARS)
            if not name:
                problem(f"{where}: a category has no name")
                continue
            slug = slugify(str(item.get("slug") or name), 40)
            if slug in taken:
                if strict:
                    problem(f"{where}: two categories have the slug {slug!r}")
                slug = unique_slug(slug, taken, 40)
                notes.append(f"schema: {where}: duplicate category slug renamed to {slug!r}")
            if len(out) >= MAX_CATEGORIES:
                problem(f"{where}: more than {MAX_CATEGORIES} categories; {name!r} dropped")
                continue
            taken.add(slug)
            sub = item.get("categories", item.get("subcategories"))
            children: list[CategorySpec] = []
            if sub:
                if depth >= MAX_DEPTH:
                    problem(f"{name}: categories nest deeper than {MAX_DEPTH} levels; the deeper ones are dropped")
                else:
                    children = categories_of(sub, depth + 1, name)
            fields = fields_of(item.get("fields"), name)
            if not fields and not children:
                problem(f"{name}: a category needs fields or sub-categories")
                continue
            out.append(CategorySpec(name, slug, clean_line(item.get("description"), DESCRIPTION_CHARS), fields, children))
        return out

    categories = categories_of(data.get("categories"), 1, "top level")
    if not categories:
        raise (UsageError if strict else ValueError)("schema: no usable categories")
    unknown = sorted(set(data) - {"overview", "categories"})
    if unknown and strict:
        problem(f"unknown key(s) {', '.join(unknown)}")
    return Schema(clean_line(data.get("overview"), 600), categories)


def load_schema_file(path: str | Path) -> Schema:
    """A reviewed schema from a YAML (or JSON) file such as `<doc>/schema.yaml` or `schema discover -o`."""
    p = Path(path)
    try:
        data = safe_yaml().load(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the schema ({exc.strerror or exc})") from None
    except (YAMLError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: invalid YAML ({str(exc).splitlines()[0]})") from None
    try:
        return schema_from_data(data, strict=True)
    except UsageError as exc:
        raise UsageError(f"{path}: {exc}") from None


def dump_schema_yaml(schema: Schema, method: str | None = None) -> bytes:
    """schema.yaml bytes: the `hti` envelope (and `method` when given), then the schema."""
    head: dict[str, Any] = {"hti": 1}
    if method:
        head["method"] = method
    return dump_yaml({**head, **schema.to_dict()}, block_lists=True).encode("utf-8")
