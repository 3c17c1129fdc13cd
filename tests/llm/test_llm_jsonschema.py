from hti_git.llm.jsonschema import is_valid, validation_errors

SUBJECTS = {
    "type": "object",
    "properties": {
        "subjects": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "kind": {"type": "string", "enum": ["party", "term"]},
                    "count": {"type": "integer"},
                    "score": {"type": ["number", "null"]},
                    "ok": {"type": "boolean"},
                },
                "required": ["name", "kind"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["subjects"],
    "additionalProperties": False,
}


def test_valid_instance_has_no_errors():
    value = {"subjects": [{"name": "Acme", "kind": "party", "count": 2, "score": None, "ok": True}]}
    assert validation_errors(value, SUBJECTS) == []


def test_errors_name_the_path():
    value = {"subjects": [{"name": 3, "kind": "party"}, {"kind": "other", "extra": 1}]}
    errors = validation_errors(value, SUBJECTS)
    assert "$.subjects[0].name: expected string, got integer" in errors
    assert "$.subjects[1]: missing required property 'name'" in errors
    assert any("is not one of" in e for e in errors)
    assert "$.subjects[1]: unexpected property 'extra'" in errors


def test_bool_is_not_a_number_and_whole_floats_are_integers():
    assert not is_valid(True, {"type": "integer"})
    assert not is_valid(False, {"type": "number"})
    assert is_valid(2.0, {"type": "integer"})
    assert not is_valid(2.5, {"type": "integer"})
    assert is_valid(None, {"type": "null"})


def test_refs_and_any_of():
    schema = {
        "$defs": {"node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["children"]}},
        "$ref": "#/$defs/node",
    }
    assert is_valid({"children": [{"children": []}]}, schema)
    assert not is_valid({"children": [{}]}, schema)
    assert is_valid("x", {"anyOf": [{"type": "integer"}, {"type": "string"}]})
    assert not is_valid([], {"anyOf": [{"type": "integer"}, {"type": "string"}]})


def test_limit_bounds_the_error_list():
    value = {"subjects": [{"name": 1, "kind": "party"}] * 50}
    assert len(validation_errors(value, SUBJECTS, limit=3)) == 3
