"""A test-side store that executes exactly the statement forms the Cypher export writes, with Neo4j 5's
semantics for them (MERGE by key, SET label, SET +=), so a test can import a script twice and compare.
No Neo4j server runs here; this checks the script's own idempotence and escaping, not Neo4j."""

from __future__ import annotations

import re
from typing import Any

_CONSTRAINT = re.compile(
    r"^CREATE CONSTRAINT (\w+) IF NOT EXISTS FOR \(n:KDEntity\) REQUIRE n\.kd_id IS UNIQUE$"
)
_ROWS = r"^UNWIND (?P<rows>\[\n.*\n\]) AS row "
NODES = re.compile(
    _ROWS + r"MERGE \(n:KDEntity \{kd_id: row\.kd_id\}\) SET n:(?P<label>[A-Za-z]+) SET n \+= row$", re.S
)
LINKS = re.compile(
    _ROWS + r"MATCH \(a:KDEntity \{kd_id: row\.a\}\), \(b:KDEntity \{kd_id: row\.b\}\) "
    r"MERGE \(a\)-\[r:(?P<type>[A-Z_]+)(?P<id> \{kd_id: row\.id\})?\]->\(b\)"
    r"(?P<props> SET r \+= row\.props)?$",
    re.S,
)


def rows(text: str) -> list[Any]:
    """The rows of an UNWIND list: one literal map a line, separated by ``,`` at the line's end."""
    assert text.startswith("[\n") and text.endswith("\n]")
    rows = Literal("[" + text[2:-2].replace(",\n", ", ") + "]").parse()
    assert isinstance(rows, list) and all(isinstance(row, dict) for row in rows)
    return rows


class Literal:
    """Parses Cypher literals: strings (with escapes), numbers, booleans, lists, maps."""

    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0

    def parse(self) -> Any:
        value = self.value()
        assert self.at == len(self.text), self.text[self.at : self.at + 40]
        return value

    def value(self) -> Any:
        char = self.text[self.at]
        if char == "'":
            return self.string()
        if char == "{":
            return self.map()
        if char == "[":
            return self.list()
        match = re.compile(r"true|false|-?\d+(?:\.\d+)?(?:e-?\d+)?").match(self.text, self.at)
        assert match, self.text[self.at : self.at + 20]
        self.at = match.end()
        word = match.group()
        if word in ("true", "false"):
            return word == "true"
        return float(word) if "." in word or "e" in word else int(word)

    def string(self) -> str:
        out, self.at = [], self.at + 1
        escapes = {"\\": "\\", "'": "'", "n": "\n", "r": "\r", "t": "\t"}
        while self.text[self.at] != "'":
            char = self.text[self.at]
            if char == "\\":
                code = self.text[self.at + 1]
                if code == "u":
                    out.append(chr(int(self.text[self.at + 2 : self.at + 6], 16)))
                    self.at += 6
                    continue
                out.append(escapes[code])
                self.at += 2
                continue
            assert char not in "\n\r", "raw line break inside a string"
            out.append(char)
            self.at += 1
        self.at += 1
        return "".join(out)

    def sep(self, closing: str) -> bool:
        if self.text.startswith(", ", self.at):
            self.at += 2
            return True
        assert self.text[self.at] == closing
        self.at += 1
        return False

    def map(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        self.at += 1
        if self.text[self.at] == "}":
            self.at += 1
            return out
        while True:
            match = re.compile(r"([a-z][a-z0-9_]*): ").match(self.text, self.at)
            assert match, self.text[self.at : self.at + 30]
            self.at = match.end()
            out[match.group(1)] = self.value()
            if not self.sep("}"):
                return out

    def list(self) -> list[Any]:
        out: list[Any] = []
        self.at += 1
        if self.text[self.at] == "]":
            self.at += 1
            return out
        while True:
            out.append(self.value())
            if not self.sep("]"):
                return out


class Store:
    def __init__(self) -> None:
        self.constraints: set[str] = set()
        self.nodes: dict[str, dict[str, Any]] = {}
        self.rels: dict[str, dict[str, Any]] = {}

    def statements(self, script: str) -> list[str]:
        """Statements end with ';' at the end of a line (strings never hold a raw line break)."""
        out, pending = [], []
        for line in script.splitlines():
            if not pending and (not line or line.startswith("//")):
                continue
            pending.append(line)
            if line.endswith(";"):
                out.append("\n".join(pending)[:-1])
                pending = []
        assert not pending, pending[:2]
        return out

    def merge_link(self, kd_id: str | None, kind: str, a: str, b: str, props: dict[str, Any] | None) -> None:
        """MERGE (a)-[r:kind {kd_id}]->(b), or without a kd_id: the one link of that type from a to b."""
        assert a in self.nodes and b in self.nodes, "MATCH found nothing"
        if kd_id is None:  # a pattern without properties matches any link of that type and ends
            found = [k for k, r in self.rels.items() if (r["type"], r["from"], r["to"]) == (kind, a, b)]
            key = found[0] if found else f"{kind} {a} {b}"
        else:
            key = kd_id
        start = {"kd_id": kd_id} if kd_id is not None else {}
        rel = self.rels.setdefault(key, {"type": kind, "from": a, "to": b, "props": start})
        assert (rel["type"], rel["from"], rel["to"]) == (kind, a, b)
        rel["props"].update(props or {})

    def run(self, script: str) -> None:
        for statement in self.statements(script):
            if match := NODES.match(statement):
                for row in rows(match.group("rows")):
                    kd_id = row["kd_id"]
                    node = self.nodes.setdefault(kd_id, {"labels": {"KDEntity"}, "props": {"kd_id": kd_id}})
                    node["labels"].add(match.group("label"))
                    node["props"].update(row)
            elif match := LINKS.match(statement):
                for row in rows(match.group("rows")):
                    props = row["props"] if match.group("props") else None
                    kd_id = row["id"] if match.group("id") else None
                    assert set(row) == {"a", "b", *(["id"] if kd_id else []), *(["props"] if props else [])}
                    self.merge_link(kd_id, match.group("type"), row["a"], row["b"], props)
            elif match := _CONSTRAINT.match(statement):
                self.constraints.add(match.group(1))
            else:
                raise AssertionError(f"unexpected statement: {statement[:100]}")

    def state(self) -> tuple[Any, ...]:
        nodes = {
            k: (sorted(v["labels"]), sorted(v["props"].items(), key=lambda i: i[0]))
            for k, v in self.nodes.items()
        }
        return sorted(self.constraints), repr(sorted(nodes.items())), repr(sorted(self.rels.items()))
