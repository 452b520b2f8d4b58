"""The shipped schema as generated Python that answers only "valid or not", at interpreter speed.

Each subschema with structure (``properties``, ``items``, ...) becomes one plain function whose body
tests every keyword inline; leaf subschemas (a type, an enum, a pattern) become expressions inside
their parent. A graph that validates costs one call per object instead of one closure per keyword,
which is what makes the compiled engine fast: errors are gathered, by the closures in ``schema``,
only inside subschemas this code says are invalid. The source is generated from the schema shipped
in this package only (property names as ``repr`` literals, every other value bound as a constant),
never from a graph.

The keywords and their meaning are exactly those of ``schema.Compiler`` (draft 2020-12, the subset
the schema uses); a test holds "valid here" equal to "no error there" on mutated graphs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Valid = Callable[[Any], bool]
STRUCTURE = frozenset({"properties", "additionalProperties", "propertyNames", "items"})
_TYPES = {
    "object": "isinstance({v}, dict)",
    "array": "isinstance({v}, list)",
    "string": "isinstance({v}, str)",
    "null": "{v} is None",
    "boolean": "isinstance({v}, bool)",
    "number": "(isinstance({v}, (int, float)) and not isinstance({v}, bool))",
    "integer": (
        "((isinstance({v}, int) and not isinstance({v}, bool)) "
        "or (isinstance({v}, float) and {v}.is_integer()))"
    ),
}
_ANNOTATIONS = frozenset({"description", "$comment", "title"})
_LEAF = _ANNOTATIONS | {
    "type",
    "enum",
    "const",
    "pattern",
    "minLength",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "uniqueItems",
    "format",
    "required",
}
_NUMBER = "(isinstance({v}, (int, float)) and not isinstance({v}, bool))"


class Generator:
    """Writes one function per structured subschema (once per schema object, ``$ref``s resolved
    against ``root``, recursion allowed) and compiles them on first use."""

    def __init__(self, root: dict[str, Any], helpers: dict[str, Any]) -> None:
        self.root = root
        self.namespace: dict[str, Any] = dict(helpers)
        self.lines: list[str] = []
        self.names: dict[int, str] = {}
        self.held: list[Any] = []  # keeps every generated-for node alive, so ids stay unique
        self.compiled_upto = 0

    # -- public ---------------------------------------------------------------------------------

    def validator(self, node: Any) -> Valid:
        """The generated test of ``node``: True when ``node`` accepts the value."""
        name = self.function(node)
        if self.compiled_upto < len(self.lines):
            source = "\n".join(self.lines[self.compiled_upto :]) + "\n"
            exec(compile(source, "<episteme-graph schema>", "exec"), self.namespace)  # noqa: S102
            self.compiled_upto = len(self.lines)
        test: Valid = self.namespace[name]
        return test

    # -- generation -----------------------------------------------------------------------------

    def const(self, value: Any) -> str:
        name = f"_k{len(self.held)}"
        self.held.append(value)
        self.namespace[name] = value
        return name

    def resolve(self, pointer: str) -> Any:
        target: Any = self.root
        for part in pointer.removeprefix("#/").split("/"):
            target = target[part]
        return target

    def direct(self, node: Any) -> Any:
        """The schema a bare ``{"$ref": ...}`` points at (the same test, one call fewer)."""
        while isinstance(node, dict) and "$ref" in node and not set(node) - _ANNOTATIONS - {"$ref"}:
            node = self.resolve(node["$ref"])
        return node

    def function(self, node: Any) -> str:
        """The name of the function testing ``node``, written on first request."""
        key = id(node)
        if key in self.names:
            return self.names[key]
        name = f"_v{len(self.names)}"
        self.names[key] = name
        self.held.append(node)
        body = self.body(node)
        self.lines.append(f"def {name}(v):")
        self.lines.extend(f"    {line}" for line in body)
        self.lines.append("")
        return name

    def expr(self, node: Any, var: str) -> str:
        """An expression that is true when ``node`` accepts ``var``."""
        if node is True or node == {}:
            return "True"
        if node is False:
            return "False"
        if STRUCTURE.intersection(node):
            return f"{self.function(node)}({var})"
        parts = self.keywords(node, var)
        return " and ".join(f"({p})" for p in parts) if parts else "True"

    def keywords(self, node: dict[str, Any], v: str) -> list[str]:  # noqa: C901 - one branch per keyword
        """Expressions for every keyword of ``node`` except the structural ones."""
        out: list[str] = []
        if "$ref" in node:
            target = self.direct(self.resolve(node["$ref"]))
            if isinstance(target, dict) and not set(target) - _LEAF:
                out.append(self.expr(target, v))  # a leaf (isoDate, sha256): inline, no call
            else:
                out.append(f"{self.function(target)}({v})")
        if "type" in node:
            kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
            out.append(" or ".join(_TYPES[n].format(v=v) for n in kinds))
        if "enum" in node:
            options = node["enum"]
            if all(isinstance(o, str) for o in options):
                out.append(f"isinstance({v}, str) and {v} in {self.const(frozenset(options))}")
            else:
                out.append(f"_enum_test({self.const(options)})({v})")
        if "const" in node:
            constant = node["const"]
            if isinstance(constant, str):
                out.append(f"type({v}) is str and {v} == {self.const(constant)}")
            else:
                out.append(f"_json_equal({v}, {self.const(constant)})")
        if "pattern" in node:
            regex = self.const(re.compile(node["pattern"]))
            out.append(f"not isinstance({v}, str) or {regex}.search({v}) is not None")
        if "minLength" in node:
            out.append(f"not isinstance({v}, str) or len({v}) >= {self.const(node['minLength'])}")
        if "minItems" in node:
            out.append(f"not isinstance({v}, list) or len({v}) >= {self.const(node['minItems'])}")
        if "maxItems" in node:
            out.append(f"not isinstance({v}, list) or len({v}) <= {self.const(node['maxItems'])}")
        if "minimum" in node:
            out.append(f"not {_NUMBER.format(v=v)} or {v} >= {self.const(node['minimum'])}")
        if "maximum" in node:
            out.append(f"not {_NUMBER.format(v=v)} or {v} <= {self.const(node['maximum'])}")
        if node.get("uniqueItems"):
            out.append(f"not isinstance({v}, list) or _unique({v})")
        if "format" in node and node["format"] in self.namespace["_FORMATS"]:
            out.append(f"{self.const(self.namespace['_FORMATS'][node['format']])}({v})")
        if "required" in node:
            names = " and ".join(f"{name!r} in {v}" for name in node["required"]) or "True"
            out.append(f"not isinstance({v}, dict) or ({names})")
        for sub in node.get("allOf", ()):
            out.append(self.expr(sub, v))
        if "anyOf" in node:
            out.append(" or ".join(f"({self.expr(sub, v)})" for sub in node["anyOf"]))
        if "not" in node:
            out.append(f"not ({self.expr(node['not'], v)})")
        if "if" in node:
            condition = self.expr(node["if"], v)
            then = self.expr(node.get("then", True), v)
            otherwise = self.expr(node.get("else", True), v)
            out.append(f"({then}) if ({condition}) else ({otherwise})")
        return out

    def body(self, node: Any) -> list[str]:
        """The statements of a function testing ``v`` against ``node``."""
        if node is True or node == {}:
            return ["return True"]
        if node is False:
            return ["return False"]
        lines = [f"if not ({e}): return False" for e in self.keywords(node, "v")]
        if {"properties", "additionalProperties", "propertyNames"}.intersection(node):
            lines.append("if isinstance(v, dict):")
            for key, sub in node.get("properties", {}).items():
                test = self.expr(sub, "x")
                if test != "True":
                    lines.append(f"    x = v.get({key!r}, _MISSING)")
                    lines.append(f"    if x is not _MISSING and not ({test}): return False")
            if "additionalProperties" in node:
                known = self.const(frozenset(node.get("properties", {})))
                extra = node["additionalProperties"]
                if extra is False:
                    lines.append(f"    if not {known}.issuperset(v): return False")
                elif self.expr(extra, "x") != "True":
                    lines.append("    for k, x in v.items():")
                    lines.append(
                        f"        if k not in {known} and not ({self.expr(extra, 'x')}): return False"
                    )
            if "propertyNames" in node:
                names = self.const(remembered_per_name(self.validator_later(node["propertyNames"])))
                lines.append(f"    if not all(map({names}, v)): return False")
        if "items" in node and self.expr(node["items"], "x") != "True":
            each = self.direct(node["items"])
            if STRUCTURE.intersection(each) or "$ref" in each:
                lines.append(
                    f"if isinstance(v, list) and not all(map({self.function(each)}, v)): return False"
                )
            else:
                lines.append("if isinstance(v, list):")
                lines.append("    for x in v:")
                lines.append(f"        if not ({self.expr(each, 'x')}): return False")
        lines.append("return True")
        return lines

    def validator_later(self, node: Any) -> Valid:
        """A test of ``node`` resolved at call time (the function may not be compiled yet)."""
        name = self.function(node)
        namespace = self.namespace
        return lambda value: bool(namespace[name](value))


def remembered_per_name(test: Valid) -> Valid:
    """A test of strings (property names) remembered per string: names repeat in every object."""
    seen: dict[Any, bool] = {}

    def remembered(name: Any) -> bool:
        answer = seen.get(name)
        if answer is None:
            answer = seen[name] = test(name)
        return answer

    return remembered
