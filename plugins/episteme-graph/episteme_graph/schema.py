"""The JSON Schema shipped in this package, and two ways to run it that give the same findings.

``engine="compiled"`` (the default) runs the schema in two layers for exactly the draft 2020-12
keywords it uses: generated Python (``schemagen``) that only says whether a subschema accepts a
value, and closures that name each error, run only inside subschemas the generated test rejects, so
a valid graph costs one generated call per object. ``engine="jsonschema"`` runs the ``jsonschema``
library. jsonschema needs about 40 s for a 10,000-concept graph on a 2-core machine, the compiled
engine about 0.15 s; tests hold the two equal on every fixture and on mutated graphs.

Formats: jsonschema checks ``uri`` and ``date-time`` only when optional libraries happen to be
installed, which would make the score depend on the machine. Both engines check the two formats
here, by fixed rules, so the same graph gets the same findings everywhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any

import attrs

from episteme_graph.findings import ERROR, Finding
from episteme_graph.paths import join
from episteme_graph.schemagen import STRUCTURE, Generator, Valid, remembered_per_name

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:[^\x00-\x20\x7f-\x9f<>\"{}|\\^`]*$")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_DATE_TIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$"
)
ENGINES = ("compiled", "jsonschema")


def is_uri(value: object) -> bool:
    """An RFC 3986 absolute URI: a scheme, no whitespace or control characters, valid % escapes."""
    if not isinstance(value, str):
        return True  # formats apply to strings only
    return bool(_URI.match(value)) and not _BAD_PERCENT.search(value)


def days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if (year % 4 == 0 and year % 100 != 0) or year % 400 == 0 else 28
    return 30 if month in (4, 6, 9, 11) else 31


def is_date_time(value: object) -> bool:
    """RFC 3339 date-time with a time zone and values in range."""
    if not isinstance(value, str):
        return True
    match = _DATE_TIME.match(value)
    if not match:
        return False
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    if not 1 <= month <= 12 or not 1 <= day <= days_in_month(year, month):
        return False
    if hour > 23 or minute > 59 or second > 60:
        return False
    if match.group(9) is not None and (int(match.group(9)) > 23 or int(match.group(10)) > 59):
        return False
    return True


FORMATS: dict[str, Callable[[object], bool]] = {"uri": is_uri, "date-time": is_date_time}


@cache
def schema() -> dict[str, Any]:
    """The shipped schema (Spec 1.1, plus ``sources[].normalized_sha256``)."""
    text = resources.files("episteme_graph").joinpath("schema/knowledge.schema.json").read_text("utf-8")
    value: dict[str, Any] = json.loads(text)
    return value


# -- messages shared by both engines ----------------------------------------------------------


@attrs.frozen
class SchemaError:
    """What either engine reports: the keyword, its value in the schema, the instance, the path."""

    path: tuple[str | int, ...]
    validator: str | None
    validator_value: Any
    instance: Any
    in_property_names: bool = False


def _short(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def message(error: SchemaError) -> str:
    kind, expected, instance = error.validator, error.validator_value, error.instance
    if error.in_property_names:
        return "a private-reasoning field is not allowed in a graph"
    if kind == "type":
        wanted = expected if isinstance(expected, str) else " or ".join(expected)
        return f"expected {wanted}, found {_short(instance, 40)}"
    if kind == "required":
        return "required property is missing"
    if kind == "enum":
        return f"must be one of {', '.join(_short(v) for v in expected)}; found {_short(instance, 40)}"
    if kind == "const":
        return f"must be {_short(expected)}; found {_short(instance, 40)}"
    if kind == "pattern":
        return f"{_short(instance, 60)} does not match the pattern {expected}"
    if kind == "minLength":
        return "must not be empty" if expected == 1 else f"must have at least {expected} characters"
    if kind in ("minItems", "maxItems"):
        word = "at least" if kind == "minItems" else "at most"
        return f"must hold {word} {expected} item(s)"
    if kind in ("minimum", "maximum"):
        word = "at least" if kind == "minimum" else "at most"
        return f"must be {word} {expected}; found {_short(instance, 40)}"
    if kind == "format":
        return f"{_short(instance, 60)} is not a valid {expected}"
    if kind == "uniqueItems":
        return "holds the same item twice"
    if kind in ("anyOf", "oneOf"):
        return f"{_short(instance, 60)} matches none of the allowed forms"
    if kind is None:  # a `false` schema
        return "must be left out here"
    if kind == "not":
        return f"{_short(instance, 60)} is a form that is not allowed here"
    return f"fails the schema keyword {kind}"


def to_finding(error: SchemaError) -> Finding:
    return Finding(join(error.path), ERROR, f"schema:{error.validator or 'false'}", message(error))


# -- the compiled engine ------------------------------------------------------------------------

Path = tuple[Any, ...] | None  # a linked path: (parent, key), materialised only for an error
Check = Callable[[Any, Path, list[SchemaError]], None]


def _materialise(path: Path) -> tuple[str | int, ...]:
    parts: list[str | int] = []
    while path is not None:
        path, key = path
        parts.append(key)
    return tuple(reversed(parts))


_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
    ),
}


class Compiler:
    """Turns (sub)schemas into checks; ``$ref`` targets are compiled once (recursion allowed)."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.refs: dict[str, Check] = {}
        self.valid = Generator(root, _HELPERS)

    def ref(self, pointer: str) -> Check:
        if pointer not in self.refs:
            holder: list[Check] = []
            self.refs[pointer] = lambda inst, path, errs: holder[0](inst, path, errs)
            target: Any = self.root
            for part in pointer.removeprefix("#/").split("/"):
                target = target[part]
            holder.append(self.compile(target))
        return self.refs[pointer]

    def compile(self, node: Any) -> Check:  # noqa: C901 - one branch per keyword
        if node is True or node == {}:
            return lambda inst, path, errs: None
        if node is False:
            return lambda inst, path, errs: errs.append(SchemaError(_materialise(path), None, False, inst))
        checks: list[Check] = []
        simple: list[tuple[str, Any, Callable[[Any], bool]]] = []
        if "$ref" in node:
            checks.append(self.ref(node["$ref"]))
        if "type" in node:
            simple.append(("type", node["type"], _type_test(node["type"])))
        if "enum" in node:
            simple.append(("enum", node["enum"], _enum_test(node["enum"])))
        if "const" in node:
            constant = node["const"]
            simple.append(("const", constant, lambda v: _json_equal(v, constant)))
        if "pattern" in node:
            regex = re.compile(node["pattern"])
            simple.append(
                ("pattern", node["pattern"], lambda v: not isinstance(v, str) or regex.search(v) is not None)
            )
        if "minLength" in node:
            low = node["minLength"]
            simple.append(("minLength", low, lambda v: not isinstance(v, str) or len(v) >= low))
        if "minItems" in node:
            low_items = node["minItems"]
            simple.append(("minItems", low_items, lambda v: not isinstance(v, list) or len(v) >= low_items))
        if "maxItems" in node:
            high_items = node["maxItems"]
            simple.append(("maxItems", high_items, lambda v: not isinstance(v, list) or len(v) <= high_items))
        if "minimum" in node:
            minimum = node["minimum"]
            simple.append(("minimum", minimum, lambda v: not _is_number(v) or v >= minimum))
        if "maximum" in node:
            maximum = node["maximum"]
            simple.append(("maximum", maximum, lambda v: not _is_number(v) or v <= maximum))
        if "uniqueItems" in node and node["uniqueItems"]:
            simple.append(("uniqueItems", True, lambda v: not isinstance(v, list) or _unique(v)))
        if "format" in node and node["format"] in FORMATS:
            test = FORMATS[node["format"]]
            simple.append(("format", node["format"], test))
        if simple:
            checks.append(_simple_all(simple))
        if "required" in node:
            checks.append(_required(node["required"]))
        if "properties" in node:
            props = {k: self.compile(v) for k, v in node["properties"].items()}
            checks.append(_properties(props))
        if "additionalProperties" in node:
            known = frozenset(node.get("properties", {}))
            checks.append(_additional(known, self.compile(node["additionalProperties"])))
        if "propertyNames" in node:
            checks.append(
                _property_names(
                    remembered_per_name(self.valid.validator(node["propertyNames"])), node["propertyNames"]
                )
            )
        if "items" in node:
            checks.append(_items(self.compile(node["items"])))
        if "allOf" in node:
            checks.extend(self.compile(sub) for sub in node["allOf"])
        if "anyOf" in node:
            checks.append(_any_of([self.valid.validator(sub) for sub in node["anyOf"]], node["anyOf"]))
        if "not" in node:
            checks.append(_not(self.valid.validator(node["not"]), node["not"]))
        if "if" in node:
            checks.append(
                _if(
                    self.valid.validator(node["if"]),
                    self.compile(node.get("then", True)),
                    self.compile(node.get("else", True)),
                )
            )
        if len(checks) == 1:
            slow = checks[0]
        else:

            def slow(inst: Any, path: Path, errs: list[SchemaError]) -> None:
                for check in checks:
                    check(inst, path, errs)

        if not STRUCTURE.intersection(node):
            return slow
        valid = self.valid.validator(node)

        def gather_where_invalid(inst: Any, path: Path, errs: list[SchemaError]) -> None:
            """The generated test first; the closures that name each error only when it fails."""
            if not valid(inst):
                slow(inst, path, errs)

        return gather_where_invalid


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def _json_key(v: Any) -> Any:
    """A hashable key, equal for two values exactly when ``_json_equal`` holds (numbers by value,
    booleans apart from numbers, objects whatever their key order)."""
    if isinstance(v, bool):
        return ("b", v)
    if _is_number(v):
        return ("n", v)
    if isinstance(v, list):
        return ("l", tuple(map(_json_key, v)))
    if isinstance(v, dict):
        return ("d", frozenset((k, _json_key(x)) for k, x in v.items()))
    return (type(v).__name__, v)


def _unique(items: list[Any]) -> bool:
    """``uniqueItems``: one hash per item, not a comparison per pair (linear, whatever the list's size)."""
    return len({_json_key(item) for item in items}) == len(items)


def _type_test(names: str | list[str]) -> Callable[[Any], bool]:
    if isinstance(names, str):
        return _TYPES[names]
    kinds = [_TYPES[n] for n in names]
    return lambda v: any(k(v) for k in kinds)


def _enum_test(options: list[Any]) -> Callable[[Any], bool]:
    strings = frozenset(o for o in options if isinstance(o, str))
    if len(strings) == len(options):
        return lambda v: isinstance(v, str) and v in strings
    return lambda v: any(_json_equal(v, o) for o in options)


def _simple(keyword: str, value: Any, ok: Callable[[Any], bool]) -> Check:
    def check(inst: Any, path: Path, errs: list[SchemaError]) -> None:
        if not ok(inst):
            errs.append(SchemaError(_materialise(path), keyword, value, inst))

    return check


def _simple_all(tests: list[tuple[str, Any, Callable[[Any], bool]]]) -> Check:
    """Every one-value keyword of a subschema in one call."""
    if len(tests) == 1:
        return _simple(*tests[0])

    def check(inst: Any, path: Path, errs: list[SchemaError]) -> None:
        for keyword, value, ok in tests:
            if not ok(inst):
                errs.append(SchemaError(_materialise(path), keyword, value, inst))

    return check


def _required(names: list[str]) -> Check:
    def check(inst: Any, path: Path, errs: list[SchemaError]) -> None:
        if isinstance(inst, dict):
            for name in names:
                if name not in inst:
                    errs.append(SchemaError((*_materialise(path), name), "required", names, inst))

    return check


def _properties(props: dict[str, Check]) -> Check:
    items = list(props.items())

    def check(inst: Any, path: Path, errs: list[SchemaError]) -> None:
        if isinstance(inst, dict):
            for key, sub in items:
                if key in inst:
                    sub(inst[key], (path, key), errs)

    return check


def _additional(known: frozenset[str], sub: Check) -> Check:
    def check(inst: Any, path: Path, errs: list[SchemaError]) -> None:
        if isinstance(inst, dict):
            for key, value in inst.items():
                if key not in known:
                    sub(value, (path, key), errs)

    return check


def _property_names(name_ok: Valid, subschema: Any) -> Check:
    def check(inst: Any, path: Path, errs: list[SchemaError]) -> None:
        if isinstance(inst, dict):
            for key in inst:
                if not name_ok(key):
                    keyword = next(iter(subschema), None) if isinstance(subschema, dict) else None
                    errs.append(
                        SchemaError(
                            (*_materialise(path), key),
                            keyword,
                            subschema.get(keyword) if isinstance(subschema, dict) else subschema,
                            key,
                            True,
                        )
                    )

    return check


def _items(sub: Check) -> Check:
    def check(inst: Any, path: Path, errs: list[SchemaError]) -> None:
        if isinstance(inst, list):
            for i, item in enumerate(inst):
                sub(item, (path, i), errs)

    return check


def _any_of(branches: list[Valid], value: Any) -> Check:
    def check(inst: Any, path: Path, errs: list[SchemaError]) -> None:
        if not any(branch(inst) for branch in branches):
            errs.append(SchemaError(_materialise(path), "anyOf", value, inst))

    return check


def _not(negated: Valid, value: Any) -> Check:
    def check(inst: Any, path: Path, errs: list[SchemaError]) -> None:
        if negated(inst):
            errs.append(SchemaError(_materialise(path), "not", value, inst))

    return check


def _if(condition: Valid, then: Check, otherwise: Check) -> Check:
    def check(inst: Any, path: Path, errs: list[SchemaError]) -> None:
        (then if condition(inst) else otherwise)(inst, path, errs)

    return check


_HELPERS: dict[str, Any] = {
    "_MISSING": object(),
    "_FORMATS": FORMATS,
    "_enum_test": _enum_test,
    "_json_equal": _json_equal,
    "_unique": _unique,
}


@cache
def without_private_walk() -> dict[str, Any]:
    """The schema without its root ``noPrivateReasoning`` walk: the core rule ``private-reasoning``
    flags a superset of those keys at the same paths, where a core finding replaces the schema's,
    so leaving the walk out changes no finding (and saves a walk of every value)."""
    return {key: value for key, value in schema().items() if key != "allOf"}


@cache
def _compiler() -> Compiler:
    return Compiler(schema())


@cache
def _compiled() -> Check:
    return _compiler().compile(without_private_walk())


def valid(value: Any) -> bool:
    """True when the compiled engine finds no error: the generated test alone, no error gathered."""
    _compiled()
    return _compiler().valid.validator(without_private_walk())(value)


# -- the jsonschema engine ----------------------------------------------------------------------


@cache
def jsonschema_validator(*, private_walk: bool = True) -> Any:
    """The ``jsonschema`` library's validator of the shipped schema (with or without the root
    private-reasoning walk), checking the two formats by this module's rules."""
    import jsonschema

    checker = jsonschema.FormatChecker(formats=())
    for name, test in FORMATS.items():
        checker.checks(name)(test)
    cls = jsonschema.validators.validator_for(schema())
    return cls(schema() if private_walk else without_private_walk(), format_checker=checker)


def _from_jsonschema(error: Any, root: Any) -> SchemaError:
    parts: list[str | int] = list(error.absolute_path)
    if error.validator is None and list(error.relative_schema_path)[-1:] == ["properties"]:
        # jsonschema reports a `false` property schema at the object, not at the property: find it.
        parent = root
        for part in parts:
            parent = parent[part]
        if isinstance(parent, dict):
            parts += [key for key, value in parent.items() if value is error.instance][:1]
    in_names = "propertyNames" in error.relative_schema_path and isinstance(error.instance, str)
    if error.validator == "required":
        for name in error.validator_value:
            if error.message == f"{name!r} is a required property":
                parts.append(name)
                break
    elif in_names:
        parts.append(error.instance)
    return SchemaError(tuple(parts), error.validator, error.validator_value, error.instance, in_names)


def errors(value: Any, engine: str = "compiled") -> list[SchemaError]:
    """Every schema error of ``value``, from the engine asked for."""
    if engine == "jsonschema":
        return [_from_jsonschema(e, value) for e in jsonschema_validator().iter_errors(value)]
    found: list[SchemaError] = []
    _compiled()(value, None, found)
    return found


def check(value: Any, engine: str = "compiled") -> list[Finding]:
    """Every schema error as a finding at its JSON path (rule ``schema:<keyword>``), sorted, unique."""
    return sorted({to_finding(e) for e in errors(value, engine)})
