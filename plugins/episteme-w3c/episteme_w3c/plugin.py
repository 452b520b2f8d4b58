"""Families ``w3c`` and ``whatwg``: Bikeshed and ReSpec output.

Section ids and numbers come from the heading (``.secno``) and ``<section id>``; ``dfn`` ids become
anchors of the block that defines them; ``.algorithm`` is an algorithm block, ``pre.idl`` IDL;
notes, examples, issues and "non-normative" sections are informative, the rest normative.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from episteme_core.api import BaseFamily, Register, hookimpl

_BCP14 = re.compile(r"\b(MUST NOT|MUST|SHALL NOT|SHALL|SHOULD NOT|SHOULD|MAY|REQUIRED|RECOMMENDED|"
                    r"OPTIONAL)\b")
_INFORMATIVE = ["note", "informative", "non-normative", "warning", "issue", "ednote", "advisement",
                "annotation"]
_COMMON_PRUNE = ["nav", "#toc", ".toc", ".head", ".index", "#index", ".dfn-panel", ".respec-dfn-panel",
                 "#references", ".caniuse-status", ".mdn-anno", "#issues-index", "#idl-index"]


class W3cFamily(BaseFamily):
    name = "w3c"
    version = "1"
    authority = "normative"
    document_type = "spec"
    hosts = ("w3.org",)
    rules = {
        "prune": _COMMON_PRUNE,
        "root": ["main", "body"],
        "informativeClasses": _INFORMATIVE,
        "exampleClasses": ["example"],
        "normativeClasses": ["normative"],
        "algorithmClasses": ["algorithm"],
        "grammarClasses": ["grammar", "bnf", "abnf"],
        "idlClasses": ["idl", "webidl", "def"],
        "numberClasses": ["secno"],
    }

    def refine_block(self, block: Any, section: Any) -> Any:
        # Bikeshed marks RFC 2119 keywords; keep which ones a normative block uses
        if block.normativity != "normative":
            return block
        found = sorted(set(_BCP14.findall(block.text))) if _has_keyword(block.text) else []
        if found:
            return attrs.evolve(block, attributes={**block.attributes, "bcp14": found})
        return block


class WhatwgFamily(W3cFamily):
    name = "whatwg"
    hosts = ("whatwg.org",)
    rules = {**W3cFamily.rules, "prune": [*_COMMON_PRUNE, ".sidebar", ".back-matter"],
             "informativeClasses": [*_INFORMATIVE]}


@hookimpl
def episteme_extractors(register: Register) -> None:
    register(W3cFamily(), kind="family")
    register(WhatwgFamily(), kind="family")


_KEYWORD_WORDS = ("MUST", "SHALL", "SHOULD", "MAY", "REQUIRED", "RECOMMENDED", "OPTIONAL")


def _has_keyword(text: str) -> bool:
    """A cheap test (substring search) before the keyword regex: most blocks have none."""
    return any(word in text for word in _KEYWORD_WORDS)
