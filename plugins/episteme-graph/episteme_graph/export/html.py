"""The one-file HTML viewer: template, style and script inlined in one pass, the graph and its layout
(``layout.py``, the same the SVG picture draws) embedded as inert JSON, and a Content-Security-Policy
that admits exactly that script and style (by sha256)."""

from __future__ import annotations

import base64
import hashlib
import html
import re
from functools import cache
from importlib import resources
from typing import Any

from episteme_core.api import canonical_text
from episteme_graph import model
from episteme_graph.export import layout

_TOKEN = re.compile(r"/\*__(CSP|TITLE|CSS|GRAPH|LAYOUT|JS)__\*/")
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


@cache
def _asset(name: str) -> str:
    return resources.files("episteme_graph").joinpath(f"viewer/{name}").read_text("utf-8")


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def content_security_policy(*, header: bool = False) -> str:
    """The viewer's policy; the HTTP header form adds what a meta element cannot carry."""
    policy = (
        f"default-src 'none'; script-src {_hash(_asset('viewer.js'))}; "
        f"style-src {_hash(_asset('viewer.css'))}; img-src 'none'; connect-src 'none'; "
        "object-src 'none'; base-uri 'none'; form-action 'none'"
    )
    return policy + ("; frame-ancestors 'none'" if header else "")


def inert_json(value: Any) -> str:
    """JSON that cannot end its ``<script type="application/json">`` element or break a line."""
    text = canonical_text(value)
    return re.sub("[<>&\u2028\u2029]", lambda m: _JSON_ESCAPES[m.group()], text)


def render(graph: dict[str, Any], options: dict[str, Any]) -> bytes:
    title = model.text(model.metadata(graph).get("title")) or "Untitled graph"
    values = {
        "CSP": html.escape(content_security_policy(), quote=False),
        "TITLE": html.escape(title),
        "CSS": _asset("viewer.css"),
        "GRAPH": inert_json(graph),
        "LAYOUT": inert_json(layout.layout(graph).to_json()),
        "JS": _asset("viewer.js"),
    }
    # One pass: text put in by one token is never scanned for another.
    page = _TOKEN.sub(lambda m: values[m.group(1)], _asset("template.html"))
    return page.encode("utf-8")
