"""Merge policies: which side's value a merge keeps where two values contradict, and the JSON paths
that name those places.

A path is a tuple of steps: an object key (``str``) or a record of a collection named by its
identity (``At``: an id, a node's id, an edge's ``source__type__target``). It reads as
``$.nodes['alpha'].definition``. A preference names a path, or a prefix of one (``metadata``
covers ``metadata.title``), with ``*`` for any key and ``[*]`` for any record; the most specific
preference that matches a conflict decides it (the longest, then the one with fewer wildcards).
"""

from __future__ import annotations

import ast
import re
from typing import Any

import attrs

SIDES = ("base", "incoming")
WILDCARD = "*"


@attrs.frozen
class At:
    """A record of a collection, by its identity (``[*]`` in a pattern: any record)."""

    ident: str


Path = tuple[str | At, ...]


def render(path: Path) -> str:
    """``$.nodes['alpha'].definition``: keys after dots, identities in brackets (Python's repr)."""
    return "$" + "".join(f"[{step.ident!r}]" if isinstance(step, At) else f".{step}" for step in path)


def option_text(path: Path) -> str:
    """The path as ``--prefer`` takes it (without ``$.``)."""
    return render(path)[2:]


_STEP = re.compile(
    r"""\.?(?P<key>[^.\[\]'"]+)|\[(?P<quoted>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\]|\[(?P<bare>[^\]'"]*)\]"""
)


def parse_path(text: str) -> Path:
    """A path as written on the command line: ``metadata.title``, ``$.nodes['alpha'].cluster``,
    ``nodes[*].definition``, ``edges["a__uses__b"].weight`` (quotes optional in brackets)."""
    rest = text.strip()
    if rest.startswith("$"):
        rest = rest[1:]
    steps: list[str | At] = []
    while rest:
        match = _STEP.match(rest)
        if not match or match.end() == 0:
            raise ValueError(f"cannot read {text!r} as a JSON path (near {rest[:20]!r})")
        if match.group("key") is not None:
            steps.append(match.group("key"))
        elif match.group("quoted") is not None:
            steps.append(At(str(ast.literal_eval(match.group("quoted")))))
        else:
            steps.append(At(match.group("bare")))
        rest = rest[match.end() :]
    if not steps:
        raise ValueError(f"{text!r} names no path")
    return tuple(steps)


@attrs.frozen
class Preference:
    """``--prefer PATH=SIDE``: at PATH (and below it), keep SIDE's value."""

    path: Path
    side: str

    @property
    def text(self) -> str:
        pattern = option_text(self.path).replace("['*']", "[*]")
        return f"--prefer {pattern}={self.side}"

    def matches(self, path: Path) -> bool:
        if len(self.path) > len(path):
            return False
        for want, have in zip(self.path, path, strict=False):
            if isinstance(want, At):
                if not isinstance(have, At) or (want.ident != WILDCARD and want.ident != have.ident):
                    return False
            elif isinstance(have, At) or (want != WILDCARD and want != have):
                return False
        return True

    @property
    def rank(self) -> tuple[int, int]:
        wildcards = sum(1 for s in self.path if s == WILDCARD or (isinstance(s, At) and s.ident == WILDCARD))
        return (len(self.path), -wildcards)


def parse_preference(text: str) -> tuple[str | None, Preference | None]:
    """``base`` / ``incoming`` (every scalar conflict) or ``PATH=base|incoming``."""
    if text in SIDES:
        return text, None
    path_text, sep, side = text.rpartition("=")
    if not sep or side not in SIDES or not path_text:
        raise ValueError(f"--prefer {text!r}: give base, incoming, or PATH=base|incoming")
    return None, Preference(parse_path(path_text), side)


@attrs.frozen
class MergePolicy:
    """How a merge treats contradictions. The default is the seed's rule: every contradiction fails
    (facts may be kept side by side with ``fact_conflicts="record"``). ``prefer`` keeps one side's
    value at every scalar conflict (facts excepted: their contradictions are kept side by side or
    refused, never chosen, unless a path preference names them); ``paths`` keep one side's value
    where they match."""

    fact_conflicts: str = "error"
    prefer: str | None = None
    paths: tuple[Preference, ...] = ()

    @classmethod
    def from_options(
        cls, fact_conflicts: str = "error", prefer: list[str] | tuple[str, ...] = ()
    ) -> MergePolicy:
        """The policy of ``--fact-conflicts`` and the ``--prefer`` values (the last global side wins;
        two preferences for one path with different sides are refused)."""
        side: str | None = None
        paths: dict[Path, Preference] = {}
        for text in prefer:
            global_side, preference = parse_preference(text)
            if global_side is not None:
                side = global_side
            elif preference is not None:
                earlier = paths.get(preference.path)
                if earlier is not None and earlier.side != preference.side:
                    raise ValueError(f"{earlier.text} and {preference.text} contradict each other")
                paths[preference.path] = preference
        return cls(fact_conflicts=fact_conflicts, prefer=side, paths=tuple(paths.values()))

    def choose(self, path: Path) -> tuple[str, str] | None:
        """(side, the option that chose it) for a conflict at ``path``, or None (refuse)."""
        found = [p for p in self.paths if p.matches(path)]
        if found:
            best = max(found, key=lambda p: p.rank)
            return best.side, best.text
        if self.prefer is not None and not (path and path[0] == "facts"):
            return self.prefer, f"--prefer {self.prefer}"
        return None

    def describe(self) -> dict[str, Any]:
        return {
            "factConflicts": self.fact_conflicts,
            "prefer": self.prefer,
            "preferPaths": sorted(p.text.removeprefix("--prefer ") for p in self.paths),
        }


@attrs.frozen
class Resolution:
    """A contradiction a policy settled: where, both values, which was kept, by which option."""

    path: Path
    base: Any
    incoming: Any
    kept: str
    rule: str

    def to_json(self) -> dict[str, Any]:
        return {
            "path": render(self.path),
            "kept": self.kept,
            "base": self.base,
            "incoming": self.incoming,
            "policy": self.rule,
        }
