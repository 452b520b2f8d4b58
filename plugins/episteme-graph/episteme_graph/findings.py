"""Validation findings and the conformance score they give."""

from __future__ import annotations

from typing import Any

import attrs

ERROR, WARNING = "error", "warning"
SEMANTIC_STATEMENT = "semantic accuracy was not evaluated: a passing graph is well formed, not true"


@attrs.frozen(order=True)
class Finding:
    """One problem at one JSON path: ``rule`` names the check, ``message`` says what to fix."""

    path: str
    level: str
    rule: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


def conformance_score(errors: int, warnings: int) -> int:
    """``max(0, 100 - 10*errors - 2*warnings)``: every finding counts the same within its level."""
    return max(0, 100 - 10 * errors - 2 * warnings)


class Collector:
    """Gathers findings from the rules in the order they run."""

    def __init__(self) -> None:
        self.items: list[Finding] = []

    def error(self, path: str, rule: str, message: str) -> None:
        self.items.append(Finding(path, ERROR, rule, message))

    def warning(self, path: str, rule: str, message: str) -> None:
        self.items.append(Finding(path, WARNING, rule, message))
