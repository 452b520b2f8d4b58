"""The xml extractor: safe parsing (no DTD, no external entities, bounded depth and size).

The DOCTYPE is never given to the parser. Its internal entities are expanded by us, once and
without nesting: an entity whose value refers to another entity (the shape of every "billion
laughs" bomb) is refused at once, and so is an expansion past the byte bound. External entities
are never fetched. The tree is then parsed by defusedxml with DTDs forbidden and a depth bound.
"""

from __future__ import annotations

import re
from typing import Any

from episteme_core.extract.builder import DocumentBuilder
from episteme_core.records.evidence import Document
from episteme_core.records.extraction import ExtractRequest
from episteme_core.text.decode import decode

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_DEPTH = 256
# The whole tree is held while it is read: past this many elements the rest is not parsed and the
# document is partial (ELEMENT_LIMIT).
DEFAULT_MAX_ELEMENTS = 500_000
MAX_ENTITIES = 2000
MAX_ENTITY_VALUE = 16 * 1024
PREDEFINED = frozenset({"amp", "lt", "gt", "quot", "apos"})

_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")
_DOCTYPE_START = re.compile(r"<!DOCTYPE\b", re.IGNORECASE)
# ``[^>]*+`` is possessive: the spaces before ``>`` are its own, never retried (linear).
_ENTITY = re.compile(
    r"<!ENTITY\s+(%\s+)?([^\s%\"'>]+)\s+(?:\"([^\"]*)\"|'([^']*)'|((?:SYSTEM|PUBLIC)\b[^>]*+))\s*>",
    re.S,
)
_REF = re.compile(r"&([A-Za-z_:][\w.:-]*);")
_WS = re.compile(r"[ \t\n\r\f]+")


class XmlRefused(Exception):
    """The XML was refused at a bound or for an unsafe construct; ``code`` names which."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _doctype_span(text: str) -> tuple[int, int, str] | None:
    """Where the DOCTYPE is (start, end) and its internal subset, or None."""
    match = _DOCTYPE_START.search(text, 0, min(len(text), 4 * 1024 * 1024))
    if match is None:
        return None
    i, depth, quote, subset_start, subset_end = match.end(), 0, "", -1, -1
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "[":
            depth += 1
            if depth == 1:
                subset_start = i + 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                subset_end = i
        elif ch == ">" and depth == 0:
            subset = text[subset_start:subset_end] if subset_start >= 0 else ""
            return match.start(), i + 1, subset
        i += 1
    raise XmlRefused("MALFORMED_XML", "the DOCTYPE never ends")


def expand_entities(text: str, max_bytes: int, builder: DocumentBuilder | None) -> str:
    """Remove the DOCTYPE and expand its internal entities once; refuse nested ones."""
    found = _doctype_span(text)
    if found is None:
        return text
    start, end, subset = found
    entities: dict[str, str] = {}
    skipped: list[str] = []
    for match in _ENTITY.finditer(subset):
        parameter, name, v1, v2, external = match.groups()
        if len(entities) >= MAX_ENTITIES:
            raise XmlRefused("ENTITY_LIMIT", f"more than {MAX_ENTITIES} entity declarations")
        if parameter or external is not None:
            skipped.append(name)
            continue
        value = v1 if v1 is not None else v2 or ""
        if any(ref not in PREDEFINED for ref in _REF.findall(value)):
            raise XmlRefused(
                "ENTITY_EXPANSION_REFUSED",
                f"entity {name!r} refers to other entities (nested expansion is refused: "
                "the shape of an entity bomb)",
            )
        if len(value) > MAX_ENTITY_VALUE:
            raise XmlRefused("ENTITY_LIMIT", f"entity {name!r} is longer than {MAX_ENTITY_VALUE}")
        entities.setdefault(name, value)
    if skipped and builder is not None:
        names = ", ".join(sorted(set(skipped))[:10])
        builder.diagnose("EXTERNAL_ENTITY_IGNORED", "warning",
                         f"external or parameter entities were not loaded: {names}")
    body = text[:start] + text[end:]
    total = len(body)
    unknown: set[str] = set()

    def replace(match: re.Match[str]) -> str:
        nonlocal total
        name = match.group(1)
        if name in PREDEFINED:
            return match.group(0)
        value = entities.get(name)
        if value is None:
            unknown.add(name)
            return ""
        total += len(value)
        if total > max_bytes:
            raise XmlRefused("TOO_LARGE", f"entity expansion passes the bound of {max_bytes} characters")
        return value

    body = _REF.sub(replace, body)
    if unknown and builder is not None:
        builder.diagnose("UNDEFINED_ENTITY", "warning",
                         f"undefined entities dropped: {', '.join(sorted(unknown)[:10])}")
    return body


class _ElementLimit(Exception):
    """Raised inside the parser at the element bound; the tree built so far is kept."""


def parse_xml_bounded(text: str, max_depth: int, max_elements: int = DEFAULT_MAX_ELEMENTS,
                      ) -> tuple[Any, XmlRefused | None]:
    """The element tree of ``text`` (no DTD, no external entity, within ``max_depth``): past
    ``max_elements`` the elements read so far are returned (closed where the parse stopped) with the
    refusal that ended it."""
    from xml.etree.ElementTree import TreeBuilder

    from defusedxml import DefusedXmlException  # type: ignore[import-untyped]
    from defusedxml.ElementTree import DefusedXMLParser, ParseError  # type: ignore[import-untyped]

    class Bounded(TreeBuilder):
        depth = 0
        elements = 0

        def __init__(self) -> None:
            super().__init__()
            self.open: list[Any] = []

        def start(self, tag: Any, attrs: Any) -> Any:
            self.depth += 1
            if self.depth > max_depth:
                raise XmlRefused("NESTING_TOO_DEEP", f"elements nested deeper than {max_depth}")
            self.elements += 1
            if self.elements > max_elements:
                raise _ElementLimit()
            self.open.append(tag)
            return super().start(tag, attrs)

        def end(self, tag: Any) -> Any:
            self.depth -= 1
            self.open.pop()
            return super().end(tag)

    target = Bounded()
    parser = DefusedXMLParser(target=target, forbid_dtd=True, forbid_entities=True,
                              forbid_external=True)
    try:
        parser.feed(_DECL.sub("", text, count=1))
        return parser.close(), None
    except _ElementLimit:
        for tag in reversed(target.open):
            TreeBuilder.end(target, tag)
        return TreeBuilder.close(target), XmlRefused(
            "ELEMENT_LIMIT", f"more than {max_elements} elements: the rest was not parsed")
    except DefusedXmlException as exc:
        raise XmlRefused("UNSAFE_XML", f"refused: {type(exc).__name__}") from exc
    except ParseError as exc:
        raise XmlRefused("MALFORMED_XML", f"not well-formed XML: {exc}") from exc


def local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def element_text(el: Any) -> str:
    return _WS.sub(" ", "".join(el.itertext())).strip()


def generic_structure(root: Any, builder: DocumentBuilder) -> None:
    """Any XML: a section per child of the root, a paragraph per element holding its own text."""
    for child in list(root) or [root]:
        if builder.full:  # a bound of the document was reached
            return
        title = child.find("title")
        heading = element_text(title) if title is not None else local(child.tag)
        builder.open_section(heading or local(child.tag), 1, anchor=child.get("id"))
        stack = [(child, [local(child.tag)])]
        while stack and not builder.full:
            el, path = stack.pop()
            own = _WS.sub(" ", " ".join(
                t for t in [el.text or "", *((c.tail or "") for c in el)] if t.strip())).strip()
            if own:
                builder.add_block("paragraph", own, anchor=el.get("id"),
                                  attributes={"element": "/".join(path)})
            for sub in reversed(list(el)):
                stack.append((sub, [*path, local(sub.tag)]))


class XmlExtractor:
    """The builtin ``xml`` extractor."""

    name = "xml"
    version = "1"
    content_types = ("application/xml", "text/xml")
    limits = ("no-dtd", "no-external-entities", "schemas-not-applied")
    option_names = ("maxBytes", "maxDepth", "maxElements")

    def extract(self, request: ExtractRequest) -> Document:
        builder = DocumentBuilder(request, extractor=self.name, extractor_version=self.version,
                                  document_type=getattr(request.family, "document_type", None) or "xml",
                                  limits=self.limits)
        max_bytes = int(request.options.get("maxBytes", DEFAULT_MAX_BYTES))
        max_depth = int(request.options.get("maxDepth", DEFAULT_MAX_DEPTH))
        if len(request.content) > max_bytes:
            builder.fail("TOO_LARGE", f"the XML is {len(request.content)} bytes, more than {max_bytes}")
            return builder.build()
        text = decode(request.content, request.record.charset or _declared(request.content), builder)
        max_elements = int(request.options.get("maxElements", DEFAULT_MAX_ELEMENTS))
        try:
            root, stopped = parse_xml_bounded(expand_entities(text, max_bytes, builder), max_depth,
                                              max_elements)
        except XmlRefused as refused:
            builder.fail(refused.code, f"XML not extracted: {refused.message}")
            return builder.build()
        if stopped is not None:
            builder.diagnose(stopped.code, "error", f"XML partly extracted: {stopped.message}")
        hook = getattr(request.family, "structure_xml", None)
        if hook is None or not hook(root, text, builder):
            generic_structure(root, builder)
        return builder.build()


def _declared(content: bytes) -> str | None:
    match = re.match(rb"\s*<\?xml[^>]*encoding=[\"']([A-Za-z0-9._-]+)[\"']", content[:200])
    return match.group(1).decode("ascii") if match else None
