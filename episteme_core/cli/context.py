"""What a running command gets: the library's ``RunContext`` plus how the command was invoked."""

from __future__ import annotations

import attrs

from episteme_core.context import RunContext


@attrs.define
class Context(RunContext):
    """Per-invocation state handed to ``Command.run``: a ``RunContext`` that knows ``--json``/``--debug``."""

    as_json: bool = False
    debug: bool = False


__all__ = ["Context"]
