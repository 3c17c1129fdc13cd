"""A validator for the JSON Schema subset our prompts use (what OpenAI strict mode accepts).

Supported: type (one or a list) object/array/string/number/integer/boolean/null, properties,
required, additionalProperties (false or a schema), items, enum, const, anyOf, and local
"$ref": "#/$defs/<name>" (or "#/definitions/<name>"). Other keywords are ignored.
"""

from __future__ import annotations

import json
from typing import Any

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    # bool is an int in Python but not a number in JSON
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
}


def validation_errors(instance: Any, schema: dict, *, limit: int = 10) -> list[str]:
    """Up to `limit` messages like "$.items[2].name: expected string, got null" ([] when valid)."""
    errors: list[str] = []
    _check(instance, schema, "$", schema, errors, limit)
    return errors[:limit]


def is_valid(instance: Any, schema: dict) -> bool:
    """True when `instance` satisfies `schema`."""
    return not validation_errors(instance, schema, limit=1)


def _resolve(schema: dict, root: dict) -> dict:
    seen = 0
    while "$ref" in schema:
        ref = schema["$ref"]
        parts = ref.split("/")
        if len(parts) != 3 or parts[0] != "#" or parts[1] not in ("$defs", "definitions"):
            raise ValueError(f"unsupported $ref {ref!r}: only #/$defs/<name> is supported")
        schema = root.get(parts[1], {}).get(parts[2])
        if schema is None:
            raise ValueError(f"unresolvable $ref {ref!r}")
        seen += 1
        if seen > 32:
            raise ValueError(f"$ref cycle at {ref!r}")
    return schema


def _kind(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _TYPES[name](value):
            return name
    return type(value).__name__


def _check(value: Any, schema: dict, path: str, root: dict, errors: list[str], limit: int) -> None:
    if len(errors) >= limit:
        return
    schema = _resolve(schema, root)
    if "anyOf" in schema:
        branches = schema["anyOf"]
        if not any(not _branch_errors(value, b, path, root) for b in branches):
            first = _branch_errors(value, branches[0], path, root) if branches else []
            errors.append(first[0] if len(branches) == 1 and first else f"{path}: matches none of anyOf")
            return
    types = schema.get("type")
    if types is not None:
        allowed = [types] if isinstance(types, str) else list(types)
        if not any(_TYPES.get(t, lambda v: False)(value) for t in allowed):
            errors.append(f"{path}: expected {' or '.join(allowed)}, got {_kind(value)}")
            return
    if "enum" in schema and value not in schema["enum"]:
        options = ", ".join(json.dumps(o) for o in schema["enum"][:8])
        errors.append(f"{path}: {json.dumps(value)[:60]} is not one of {options}")
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: expected {json.dumps(schema['const'])}")
    if isinstance(value, dict):
        _check_object(value, schema, path, root, errors, limit)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _check(item, schema["items"], f"{path}[{i}]", root, errors, limit)


def _check_object(value: dict, schema: dict, path: str, root: dict, errors: list[str], limit: int) -> None:
    props = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            errors.append(f"{path}: missing required property {name!r}")
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        where = f"{path}.{name}"
        if name in props:
            _check(item, props[name], where, root, errors, limit)
        elif extra is False:
            errors.append(f"{path}: unexpected property {name!r}")
        elif isinstance(extra, dict):
            _check(item, extra, where, root, errors, limit)


def _branch_errors(value: Any, schema: dict, path: str, root: dict) -> list[str]:
    found: list[str] = []
    _check(value, schema, path, root, found, 1)
    return found
