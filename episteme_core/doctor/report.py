"""What ``doctor`` finds: a ``Check`` per thing checked, and the ``DoctorReport`` of a whole run."""

from __future__ import annotations

from typing import Any

import attrs

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"
STATUSES = (OK, WARN, FAIL, SKIP)


@attrs.frozen
class Check:
    """One finding: what was checked, its status, a line for people, what to do, and the facts."""

    name: str
    status: str  # ok | warn | fail | skip
    summary: str
    hint: str | None = None
    details: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class DoctorReport:
    """The home checked, every check in order, and how many ended in each status."""

    home: str
    ok: bool
    checks: list[Check]
    counts: dict[str, int]
