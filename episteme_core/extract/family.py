"""The ``Family`` base class families subclass (``api.BaseFamily``), and a family's hashed rules.

What an extractor is handed is ``records.extraction.ExtractRequest``; the contracts themselves are
``kernel.contracts.Extractor`` and ``Family``. An **extractor** (``kind="extractor"``) has ``name``,
``version``, ``content_types`` (media types it reads), ``limits`` (what it cannot see) and
``extract(request) -> Document``. It works offline on the bytes in the request and never raises
for bad content: a damaged source gives a document with status ``partial`` or ``failed`` and a
diagnostic naming the cause.

A **family** (``kind="family"``) has ``name``, ``version``, ``rules`` (JSON data, hashed into the
configuration sha256), ``authority``, ``document_type`` and ``matches(url) -> bool``. Extractors read
its rules and call its optional hooks (see ``Family``); subclass ``Family`` to get the defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from episteme_core.records.evidence import Block, Section


class Family:
    """Base of every family: data rules plus hooks extractors call; the defaults change nothing.

    Hooks (override what the family needs):
    - ``structure_text(text, builder) -> bool``: lay out a plain-text source (the rfc family reads
      paginated RFC text); return False to let the text extractor do it.
    - ``structure_xml(root, text, builder) -> bool``: the same for an XML tree (RFC XML v2/v3).
    - ``structure_html(root, builder) -> bool``: the same for an HTML tree (htmlized RFC text).
    - ``refine_block(block, section) -> Block``: adjust a finished block (mark BCP 14 keywords).
    - ``section_number(heading_text, element_id) -> str | None``: a section's printed number.
    """

    name: str = "generic"
    version: str = "1"
    authority: str = "informative"
    document_type: str | None = None
    rules: Mapping[str, Any] = {}
    hosts: tuple[str, ...] = ()

    def matches(self, url: str) -> bool:
        """True when ``url``'s host is one of ``hosts`` or ends with ``.host``."""
        host = _host(url)
        return any(host == h or host.endswith("." + h) for h in self.hosts)

    def structure_text(self, text: str, builder: Any) -> bool:
        return False

    def structure_xml(self, root: Any, text: str, builder: Any) -> bool:
        return False

    def structure_html(self, root: Any, builder: Any) -> bool:
        return False

    def refine_block(self, block: Block, section: Section | None) -> Block:
        return block

    def section_number(self, heading: str, element_id: str | None) -> str | None:
        return None


def _host(url: str) -> str:
    from urllib.parse import urlsplit

    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def rules_of(family: Any) -> dict[str, Any]:
    """A family's rules as plain JSON data (what is hashed)."""
    rules = getattr(family, "rules", {}) or {}
    return {str(key): rules[key] for key in sorted(rules)}
