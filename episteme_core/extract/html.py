"""The html extractor: html5lib's tree walked into sections (heading outline, ``<section>``) and blocks.

Scripts never run; ``script``, ``style``, ``template``, ``noscript`` and ``head`` never become text.
Families tune it with data rules (what to prune, which classes are informative, which elements
are algorithms, grammars or IDL). Parsing is bounded in bytes, nesting depth and time.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import attrs

from episteme_core.extract.builder import DocumentBuilder
from episteme_core.records.evidence import Document
from episteme_core.records.extraction import ExtractRequest
from episteme_core.records.gcpause import paused_cycle_gc

NEVER_TEXT = frozenset({"script", "style", "template", "noscript", "head", "svg", "math", "iframe",
                        "object", "embed", "canvas", "button", "select", "input", "textarea"})
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
CONTAINERS = frozenset({"div", "section", "article", "main", "body", "aside", "header", "footer",
                        "nav", "figure", "blockquote", "center", "form", "fieldset", "details",
                        "hgroup", "address", "search", "emu-clause", "emu-intro", "emu-annex",
                        "html"})
LISTS = frozenset({"ul", "ol", "menu"})
BLOCK_TAGS = frozenset({"p", "pre", "table", "dl", "li", "figcaption", "hr", "xmp", "listing",
                        "summary", "caption", "dt", "dd"}) | CONTAINERS | LISTS | frozenset(HEADINGS)
SKIP_IN_TEXT_CLASSES = frozenset({"pilcrow", "self-link", "dfn-panel", "annotation", "heading-link"})
NON_NORMATIVE_LINE = re.compile(
    r"^\s*(?:this\s+(?:section|appendix|subsection)\s+is\s+)?(?:non-normative|informative|not\s+normative)\.?\s*$",
    re.IGNORECASE,
)
_WS = re.compile(r"[ \t\n\r\f]+")
_BREAK = "\u2029"  # a block boundary inside collected text (becomes a newline)
_NO_CLASSES: set[str] = set()
_IGNORED_IDS = ("respec-", "dfn-panel-", "infopanel-")
ID_LIMIT = 256
TEXT, TAIL = 0, 1  # the slots of an element's text (html_offsets)

DEFAULT_RULES: dict[str, Any] = {
    "prune": ["nav", "#toc", ".toc"],
    "root": ["main", "body"],
    "informativeClasses": ["note", "informative", "non-normative", "warning", "issue", "ednote",
                           "advisement"],
    "exampleClasses": ["example", "examples"],
    "normativeClasses": ["normative"],
    "algorithmClasses": ["algorithm"],
    "grammarClasses": ["grammar", "bnf", "abnf"],
    "idlClasses": ["idl", "webidl"],
    "numberClasses": ["secno", "section-number"],
}

DEFAULT_MAX_BYTES = 32 * 1024 * 1024
DEFAULT_MAX_DEPTH = 400
DEFAULT_TIME_LIMIT_S = 120.0
# html5lib holds the whole tree (about 800 bytes an element with the source map): past this many
# elements the rest of the page is not parsed and the document is partial (ELEMENT_LIMIT).
DEFAULT_MAX_ELEMENTS = 250_000


class _Stop(Exception):
    """Parsing stopped at a bound (depth or time)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _bounded_tree_builder(max_depth: int, deadline: float, max_elements: int = DEFAULT_MAX_ELEMENTS) -> Any:
    """html5lib's etree builder, refusing nesting past ``max_depth``, work past ``deadline`` and
    elements past ``max_elements`` (that one stops the parse but keeps the tree built so far)."""
    import html5lib

    base: Any = html5lib.getTreeBuilder("etree")

    class Bounded(base):  # type: ignore[misc, valid-type]
        elements = 0

        def _check(self) -> None:
            if len(self.openElements) >= max_depth:
                raise _Stop("NESTING_TOO_DEEP", f"elements nested deeper than {max_depth}")
            if time.monotonic() > deadline:
                raise _Stop("TIME_LIMIT", "the time bound was reached while parsing")
            self.elements += 1
            if self.elements > max_elements:
                raise _Stop("ELEMENT_LIMIT", f"more than {max_elements} elements: the rest of the "
                            "page was not parsed")

        def insertElementNormal(self, token: Any) -> Any:  # noqa: N802 (html5lib's name)
            self._check()
            return super().insertElementNormal(token)

        def insertElementTable(self, token: Any) -> Any:  # noqa: N802
            self._check()
            return super().insertElementTable(token)

    return Bounded


def parse_html_bounded(content: bytes, charset: str | None, max_depth: int, deadline: float,
                       source_map: Any = None, max_elements: int = DEFAULT_MAX_ELEMENTS,
                       ) -> tuple[Any, _Stop | None]:
    """The html5lib tree of ``content`` within the depth, deadline and element bounds: past
    ``max_elements`` the tree parsed so far is returned with the ``_Stop`` that ended it (every other
    bound still raises). With a ``SourceMap`` the text offsets are recorded too."""
    import html5lib

    tree = _bounded_tree_builder(max_depth, deadline, max_elements)
    if source_map is not None:
        from episteme_core.extract.html_offsets import instrumented_parser

        parser_class, tree = instrumented_parser(tree, source_map)
        parser = parser_class(tree=tree, namespaceHTMLElements=False)
    else:
        parser = html5lib.HTMLParser(tree=tree, namespaceHTMLElements=False)
    kwargs: dict[str, Any] = {}
    if charset:
        kwargs["transport_encoding"] = charset
    stopped: _Stop | None = None
    try:
        document = parser.parse(content, **kwargs)
    except _Stop as stop:
        if stop.code != "ELEMENT_LIMIT":
            raise
        stopped, document = stop, parser.tree.getDocument()
    if source_map is not None:
        source_map.encoding = parser.documentEncoding
    return document, stopped


@attrs.frozen
class _Selector:
    tag: str | None
    id: str | None
    cls: str | None


def _parse_selectors(raw: Any) -> list[_Selector]:
    """The selector subset rules use: ``tag``, ``#id``, ``.class``, ``tag.class``, ``tag#id``."""
    out = []
    for text in raw or []:
        match = re.fullmatch(r"([a-zA-Z][\w-]*)?(?:#([\w-]+))?(?:\.([\w-]+))?", str(text).strip())
        if match and any(match.groups()):
            out.append(_Selector(match.group(1), match.group(2), match.group(3)))
    return out


def _matches(el: Any, selectors: list[_Selector], classes: set[str]) -> bool:
    for sel in selectors:
        if sel.tag and el.tag != sel.tag:
            continue
        if sel.id and el.get("id") != sel.id:
            continue
        if sel.cls and sel.cls not in classes:
            continue
        return True
    return False


class _SelectorSet:
    """Selectors compiled to set lookups: one element is tested in O(its classes), not O(rules)."""

    def __init__(self, selectors: list[_Selector]) -> None:
        self.tags = {s.tag for s in selectors if s.tag and not s.id and not s.cls}
        self.ids = {s.id for s in selectors if s.id and not s.tag and not s.cls}
        self.classes = {s.cls for s in selectors if s.cls and not s.tag and not s.id}
        self.other = [s for s in selectors if sum(map(bool, (s.tag, s.id, s.cls))) > 1]

    def match(self, el: Any, classes: set[str]) -> bool:
        if el.tag in self.tags or (self.ids and el.get("id") in self.ids):
            return True
        if classes and not self.classes.isdisjoint(classes):
            return True
        return bool(self.other) and _matches(el, self.other, classes)


def _classes(el: Any) -> set[str]:
    return set((el.get("class") or "").split())


_SLICE = 1 << 20


def collapse(text: str) -> str:
    """Whitespace as a browser renders it: runs of space, tab and newline become one space.

    A long text is collapsed a slice at a time: one substitution over millions of words would hold
    all of them at once (about 100 bytes a word).
    """
    if len(text) <= _SLICE:
        return _WS.sub(" ", text).strip()
    pieces: list[str] = []
    after_space = True  # a run at the very start is dropped, as strip() would
    for at in range(0, len(text), _SLICE):
        piece = _WS.sub(" ", text[at:at + _SLICE])
        if after_space and piece.startswith(" "):
            piece = piece[1:]  # the rest of a run the previous slice already wrote as one space
        if piece:
            pieces.append(piece)
            after_space = piece.endswith(" ")
    return "".join(pieces).strip()


def in_order(text: str, source: str, start: int, end: int) -> bool:
    """True when every non-space character of ``text`` occurs in ``source[start:end]`` in order."""
    at = start
    for word in text.split():
        found = source.find(word, at, end)
        if found >= 0:
            at = found + len(word)
            continue
        for char in word:  # markup or a character reference inside the word
            found = source.find(char, at, end)
            if found < 0:
                return False
            at = found + 1
    return True


def _joined(raw: str) -> str:
    """Collected text: each block-separated line collapsed, empty lines dropped."""
    return "\n".join(line for line in (collapse(x) for x in raw.split(_BREAK)) if line)


@attrs.define
class _Ctx:
    normativity: str | None = None  # forced by an ancestor's class
    kind: str | None = None  # forced kind (note, example)


class HtmlWalker:
    """Walks one parsed tree into a DocumentBuilder, following a family's rules."""

    def __init__(self, builder: DocumentBuilder, rules: dict[str, Any], family: Any,
                 source_map: Any = None, decoded: str | None = None) -> None:
        self.b = builder
        self.source_map = source_map  # text offsets recorded while parsing (html_offsets)
        self.decoded = decoded  # the decoded source spans point into; None: no spans
        self.family = family
        merged = {**DEFAULT_RULES, **rules}
        self.prune = _SelectorSet(_parse_selectors(merged["prune"]))
        self.informative = set(merged["informativeClasses"])
        self.example = set(merged["exampleClasses"])
        self.normative = set(merged["normativeClasses"])
        self.algorithm = set(merged["algorithmClasses"])
        self.grammar = set(merged["grammarClasses"])
        self.idl = set(merged["idlClasses"])
        self.number_classes = set(merged["numberClasses"])
        self.roots = _parse_selectors(merged["root"])
        self.section_floor: list[int] = [0]

    # text -------------------------------------------------------------------

    def _skip(self, el: Any) -> bool:
        tag = el.tag
        if not isinstance(tag, str) or tag in NEVER_TEXT:
            return True
        raw = el.get("class")
        classes = set(raw.split()) if raw else _NO_CLASSES
        if classes and not SKIP_IN_TEXT_CLASSES.isdisjoint(classes):
            return True
        return self.prune.match(el, classes)

    def _gather(self, el: Any, parts: list[str], keys: list[Any] | None,
                skip_classes: frozenset[str] = frozenset(), pre: bool = False) -> list[str]:
        """One pass over ``el``: its text into ``parts`` (a break at each block boundary unless
        ``pre``; ``keys`` says which text slot each part is, for spans) and its ids, returned
        ``dfn`` ids first (every id and ``a[name]``, skipped subtrees included, at most 256)."""
        dfns: list[str] = []
        found: list[str] = []
        budget = ID_LIMIT
        skip = self._skip
        breaks = not pre
        add = parts.append
        key = keys.append if keys is not None else None
        stack: list[Any] = [el]  # a node to open, or ``(node,)`` to close
        while stack:
            node = stack.pop()
            if node.__class__ is tuple:  # closing
                node = node[0]
                if breaks and (node.tag in BLOCK_TAGS or node.tag == "br"):
                    add(_BREAK)
                    if key:
                        key(None)
                if node.tail and node is not el:
                    add(node.tail)
                    if key:
                        key((node, TAIL))
                continue
            tag = node.tag
            if node is not el and (skip(node) or bool(
                    skip_classes and not skip_classes.isdisjoint(_classes(node)))):
                if isinstance(tag, str):  # its ids still count
                    for inner in node.iter():
                        if budget <= 0:
                            break
                        inner_tag = inner.tag
                        if not isinstance(inner_tag, str):
                            continue
                        value = inner.get("id") or (inner.get("name") if inner_tag == "a" else None)
                        if value and not value.startswith(_IGNORED_IDS):
                            (dfns if inner_tag == "dfn" else found).append(value)
                            budget -= 1
                if node.tail:
                    add(node.tail)
                    if key:
                        key((node, TAIL))
                continue
            if budget > 0 and isinstance(tag, str):
                value = node.get("id") or (node.get("name") if tag == "a" else None)
                if value and not value.startswith(_IGNORED_IDS):
                    (dfns if tag == "dfn" else found).append(value)
                    budget -= 1
            if breaks and node is not el and tag in BLOCK_TAGS:
                add(_BREAK)
                if key:
                    key(None)
            if node.text:
                add(node.text)
                if key:
                    key((node._el if node.__class__ is _Shell else node, TEXT))
            stack.append((node,))
            children = list(node)
            if children:
                children.reverse()
                stack += children
        return dfns + [v for v in found if not v.startswith("ref-for-")] + [
            v for v in found if v.startswith("ref-for-")]

    def text(self, el: Any, skip_classes: frozenset[str] = frozenset()) -> str:
        parts: list[str] = []
        self._gather(el, parts, None, skip_classes)
        return _joined("".join(parts))

    def ids_in(self, el: Any, limit: int = 256) -> list[str]:
        """Every id (and ``a[name]``) inside ``el``, ``dfn`` ids first: they become the block's anchors."""
        return self._gather(el, [], None)[:limit]

    def collect(self, el: Any, skip_classes: frozenset[str] = frozenset(), pre: bool = False,
                shown: str | None = None) -> tuple[str, list[str], tuple[int, int] | None]:
        """Text, ids and (where exact) source span of ``el`` in one walk; the span is checked
        against ``shown`` when the block shows other text (a heading with its number)."""
        parts: list[str] = []
        keys: list[Any] | None = [] if self.source_map is not None else None
        ids = self._gather(el, parts, keys, skip_classes, pre)
        raw = "".join(parts)
        text = raw.strip("\n").rstrip() if pre else _joined(raw)
        return text, ids, self.span_of(raw, parts, keys, text if shown is None else shown, pre)

    def span_of(self, raw: str, parts: list[str], keys: list[Any] | None, text: str,
                pre: bool = False) -> tuple[int, int] | None:
        """The span of ``text`` in the decoded source: from its first character's offset to one
        past its last's, kept only when those characters are there and every other character of
        the text follows in order between them (verbatim when ``decoded[start:end] == text``)."""
        decoded = self.decoded
        if keys is None or decoded is None or not text or len(text) > self.b.max_block_chars:
            return None  # a block the builder will cut keeps no span anyway
        start = end = None
        lead = "\n" if pre else None
        for part, key in zip(parts, keys, strict=True):
            kept = part.lstrip(lead)
            if kept:
                if key is not None:
                    start = self.source_map.offset_of(*key, len(part) - len(kept))
                break
        for part, key in zip(reversed(parts), reversed(keys), strict=True):
            kept = part.rstrip()
            if kept:
                if key is not None:
                    end = self.source_map.offset_of(*key, len(kept) - 1)
                break
        if start is None or end is None or end < start or end >= len(decoded):
            return None  # offsets past the decoded text: html5lib read the bytes differently
        if decoded[start:end + 1] == text or (
            decoded[start] == text[0] and decoded[end] == text[-1]
            and in_order(text, decoded, start, end + 1)
        ):
            return start, end + 1
        return None

    # structure ----------------------------------------------------------------

    def normativity_of(self, el: Any, ctx: _Ctx) -> _Ctx:
        classes = _classes(el)
        if not classes:
            return ctx
        for cls in sorted(classes):
            if cls in self.example:
                return _Ctx("example", "example")
        if classes & self.informative:
            kind = "note" if classes & {"note", "warning", "issue", "ednote", "advisement"} else ctx.kind
            return _Ctx("informative", kind)
        if classes & self.normative:
            return _Ctx("normative", ctx.kind)
        return ctx

    def root(self, document: Any) -> Any:
        for sel in self.roots:
            if sel.tag and not sel.id and not sel.cls:
                for el in document.iter(sel.tag):
                    return el
                continue
            for el in document.iter():
                if isinstance(el.tag, str) and _matches(el, [sel], _classes(el)):
                    return el
        return document

    def heading(self, el: Any, level: int, section_el: Any | None, ctx: _Ctx) -> None:
        number = None
        for node in el.iter():
            if isinstance(node.tag, str) and _classes(node) & self.number_classes:
                number = collapse("".join(node.itertext())).rstrip(".") or None
                break
        text, ids, span = self.collect(el, frozenset(self.number_classes))
        title = text.replace("\n", " ").strip()
        if not title and number is None:
            return
        anchor = (section_el.get("id") if section_el is not None else None) or el.get("id") or (
            ids[0] if ids else None)
        if anchor is None:
            for node in el.iter("a"):
                href = node.get("href") or ""
                if href.startswith("#") and len(href) > 1:
                    anchor = href[1:]
                    break
        if number is None:
            number = self.family.section_number(title, anchor) if self.family else None
        effective = max(level, self.section_floor[-1] + 1)
        normativity = ctx.normativity
        self.b.open_section(title or number or "", effective, anchor=anchor, number=number,
                            normativity=normativity)
        extra = [i for i in ([section_el.get("id")] if section_el is not None else []) + ids if i]
        shown = (f"{number} {title}" if number else title).strip()
        self.b.add_block("heading", shown, anchor=el.get("id") or anchor, anchors=extra,
                         normativity=normativity,
                         span=self.collect(el, shown=shown)[2] if number else span)
        if NON_NORMATIVE_LINE.match(title):
            self.b.mark_section("informative")

    def leaf(self, el: Any, kind: str, ctx: _Ctx, **extra: Any) -> None:
        text, ids, span = self.collect(el, pre=kind in ("code", "grammar", "idl"))
        anchor = el.get("id") or (ids[0] if ids else None)
        if kind == "paragraph" and ctx.kind:
            kind = ctx.kind
        block = self.b.add_block(kind, text, anchor=anchor, anchors=ids, span=span,
                                 normativity=ctx.normativity, **extra)
        if block is not None and kind == "paragraph" and NON_NORMATIVE_LINE.match(text):
            self.b.mark_section("informative")

    def table(self, el: Any, ctx: _Ctx) -> None:
        rows: list[list[str]] = []
        for tr in el.iter("tr"):
            cells = [self.text(cell).replace("\n", " ") for cell in tr if cell.tag in ("td", "th")]
            if any(cells):
                rows.append(cells)
        for caption in el.iter("caption"):
            self.leaf(caption, "figure_caption", ctx)
            break
        text = "\n".join("\t".join(row) for row in rows)
        ids = self.ids_in(el)
        anchor = el.get("id") or (ids[0] if ids else None)
        self.b.add_block("table", text, anchor=anchor, anchors=ids, rows=rows,
                         normativity=ctx.normativity)

    def walk(self, el: Any, ctx: _Ctx) -> None:
        """Walk the children of ``el``; loose inline content between blocks becomes paragraphs."""
        inline: list[Any] = []
        if el.text and el.text.strip():
            inline.append((el.text, (getattr(el, "_el", el), TEXT)))
        for child in el:
            tag = child.tag
            if not isinstance(tag, str) or self._skip(child):
                if child.tail and child.tail.strip():
                    inline.append((child.tail, (child, TAIL)))
                continue
            if tag in BLOCK_TAGS:
                self.flush(inline, ctx)
                inline = []
                self.element(child, ctx)
                if child.tail and child.tail.strip():
                    inline.append((child.tail, (child, TAIL)))
            else:
                inline.append(child)
        self.flush(inline, ctx)

    def flush(self, inline: list[Any], ctx: _Ctx) -> None:
        if not inline:
            return
        parts: list[str] = []
        keys: list[Any] | None = [] if self.source_map is not None else None
        anchors: list[str] = []
        for item in inline:
            if isinstance(item, tuple):
                parts.append(item[0])
                if keys is not None:
                    keys.append(item[1])
            else:
                anchors.extend(self._gather(item, parts, keys))
                if item.tail:
                    parts.append(item.tail)
                    if keys is not None:
                        keys.append((item, TAIL))
        raw = "".join(parts)
        text = _joined(raw)
        self.b.add_block(ctx.kind or "paragraph", text, anchor=anchors[0] if anchors else None,
                         anchors=anchors, normativity=ctx.normativity,
                         span=self.span_of(raw, parts, keys, text))

    def element(self, el: Any, ctx: _Ctx) -> None:
        if self.b.full:  # a bound of the document was reached: nothing more is kept
            return
        tag = el.tag
        classes = _classes(el)
        ctx = self.normativity_of(el, ctx)
        if tag in HEADINGS:
            self.heading(el, HEADINGS[tag], None, ctx)
            return
        if classes & self.algorithm and tag in ("ol", "div", "emu-alg", "section"):
            self.leaf(el, "algorithm", ctx)
            return
        if tag in ("pre", "xmp", "listing"):
            kind = "idl" if classes & self.idl else "grammar" if classes & self.grammar else "code"
            self.leaf(el, kind, ctx)
            return
        if tag == "p" or tag == "summary":
            self.leaf(el, "paragraph", ctx)
            return
        if tag == "figcaption" or tag == "caption":
            self.leaf(el, "figure_caption", ctx)
            return
        if tag == "table":
            self.table(el, ctx)
            return
        if tag in LISTS:
            for item in el:
                if item.tag == "li":
                    self.list_item(item, ctx, ordered=tag == "ol")
                elif isinstance(item.tag, str) and not self._skip(item):
                    self.element(item, ctx)
            return
        if tag == "li":
            self.list_item(el, ctx, ordered=False)
            return
        if tag == "dl":
            self.definitions(el, ctx)
            return
        if tag in ("dt", "dd"):
            self.leaf(el, "definition" if tag == "dt" else "paragraph", ctx)
            return
        if tag == "hr":
            return
        if ctx.kind in ("note", "example") and tag == "div" and not self._has_heading(el):
            self.leaf(el, ctx.kind, ctx)
            return
        if tag == "section" or tag in ("emu-clause", "emu-annex", "emu-intro"):
            self.section(el, ctx)
            return
        self.walk(el, ctx)

    def _has_heading(self, el: Any) -> bool:
        return any(isinstance(n.tag, str) and n.tag in HEADINGS for n in el.iter())

    def section(self, el: Any, ctx: _Ctx) -> None:
        """A ``<section>`` whose first heading opens a section; content after it returns to the parent."""
        first = None
        for child in el:
            if isinstance(child.tag, str) and child.tag in HEADINGS:
                first = child
                break
            if isinstance(child.tag, str) and child.tag in BLOCK_TAGS and not self._skip(child):
                break
        if first is None:
            self.walk(el, ctx)
            return
        self.heading(first, HEADINGS[first.tag], el, ctx)
        opened = self.b.current_section
        self.section_floor.append(self.b.current_level)
        try:
            self.walk(_Shell(el, first), ctx)
        finally:
            self.section_floor.pop()
        if opened is not None:
            self.b.close_section(opened)

    def list_item(self, el: Any, ctx: _Ctx, ordered: bool) -> None:
        ctx = self.normativity_of(el, ctx)
        nested = [c for c in el if isinstance(c.tag, str) and c.tag in (LISTS | {"pre", "table", "dl"})]
        own, ids, span = self.collect(_Shell(el, *nested) if nested else el)
        anchor = el.get("id") or (ids[0] if ids else None)
        self.b.add_block(ctx.kind or "list_item", own, anchor=anchor, anchors=ids, span=span,
                         normativity=ctx.normativity, attributes={"ordered": ordered})
        for child in nested:
            self.element(child, ctx)

    def definitions(self, el: Any, ctx: _Ctx) -> None:
        term: Any = None
        texts: list[str] = []
        anchors: list[str] = []

        def emit() -> None:
            if texts:
                anchor = (term.get("id") if term is not None else None) or (anchors[0] if anchors else None)
                self.b.add_block("definition", "\n".join(texts), anchor=anchor, anchors=anchors,
                                 normativity=ctx.normativity)

        for child in el:
            if child.tag == "dt":
                if term is not None and len(texts) > 1:
                    emit()
                    texts, anchors = [], []
                elif term is None and texts:
                    emit()
                    texts, anchors = [], []
                term = child
                text, ids, _ = self.collect(child)
                texts.append(text.replace("\n", " "))
                anchors.extend(ids)
            elif child.tag == "dd":
                text, ids, _ = self.collect(child)
                texts.append(text)
                anchors.extend(ids)
            elif child.tag == "div":  # dl > div > dt/dd groups
                emit()
                texts, anchors, term = [], [], None
                self.definitions(child, ctx)
        emit()


class _Shell:
    """A view of an element without some of its children (the heading of a section, nested lists)."""

    def __init__(self, el: Any, *without: Any) -> None:
        self.tag = el.tag
        self.text = el.text
        self.tail = None
        self._el = el
        self._children = [c for c in el if all(c is not w for w in without)]
        self.attrib = el.attrib

    def get(self, key: str, default: Any = None) -> Any:
        return self._el.get(key, default)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._children)

    def iter(self, tag: str | None = None) -> Iterator[Any]:
        if tag is None or self.tag == tag:
            yield self
        for child in self._children:
            yield from child.iter(tag)

    def itertext(self) -> Iterator[str]:
        if self.text:
            yield self.text
        for child in self._children:
            yield from child.itertext()
            if child.tail:
                yield child.tail


class HtmlExtractor:
    """The builtin ``html`` extractor (html5lib)."""

    name = "html"
    version = "2"  # 2: the <html lang> in the document's attributes
    content_types = ("text/html", "application/xhtml+xml")
    limits = ("scripts-not-run", "images-not-read", "styles-ignored")
    option_names = ("maxBytes", "maxDepth", "timeLimitS", "maxElements")

    def extract(self, request: ExtractRequest) -> Document:
        builder = DocumentBuilder(request, extractor=self.name, extractor_version=self.version,
                                  document_type=getattr(request.family, "document_type", None),
                                  limits=self.limits)
        options = request.options
        max_bytes = int(options.get("maxBytes", DEFAULT_MAX_BYTES))
        max_depth = int(options.get("maxDepth", DEFAULT_MAX_DEPTH))
        limit_s = float(options.get("timeLimitS", DEFAULT_TIME_LIMIT_S))
        max_elements = int(options.get("maxElements", DEFAULT_MAX_ELEMENTS))
        if len(request.content) > max_bytes:
            builder.fail("TOO_LARGE", f"the HTML is {len(request.content)} bytes, more than the "
                                      f"bound of {max_bytes}")
            return builder.build()
        from episteme_core.extract.html_offsets import SourceMap

        source_map = SourceMap()
        try:
            with paused_cycle_gc():  # html5lib allocates a lot and frees little: cycle collection is waste
                document, stopped = parse_html_bounded(request.content, request.record.charset, max_depth,
                                                       time.monotonic() + limit_s, source_map, max_elements)
        except _Stop as stop:
            builder.fail(stop.code, f"HTML not extracted: {stop.message}")
            return builder.build()
        except RecursionError:
            builder.fail("NESTING_TOO_DEEP", "HTML not extracted: nesting too deep")
            return builder.build()
        if stopped is not None:
            builder.diagnose(stopped.code, "error", f"HTML partly extracted: {stopped.message}")
        for title in document.iter("title"):
            builder.title = collapse("".join(title.itertext())) or None
            break
        for root in document.iter("html"):  # the document's language, for the index's stemmer
            lang = (root.get("lang") or root.get("xml:lang") or "").strip()
            if lang:
                builder.attributes["language"] = lang[:35]
            break
        hook = getattr(request.family, "structure_html", None)
        if hook is not None and hook(document, builder):
            return builder.build()
        rules = dict(getattr(request.family, "rules", {}) or {})
        walker = HtmlWalker(builder, rules, request.family, source_map,
                            _decoded(request.content, request.record.charset, source_map.encoding))
        try:
            with paused_cycle_gc():
                walker.element(walker.root(document), _Ctx())
        except RecursionError:
            builder.diagnose("NESTING_TOO_DEEP", "error", "part of the HTML was nested too deeply to read")
        return builder.build()


def _decoded(content: bytes, charset: str | None, parsed_as: str | None) -> str | None:
    """The decoded source spans point into (``extract.text.decode``), or None when html5lib read
    the bytes in another encoding (a ``<meta charset>`` the snapshot did not declare): no spans."""
    import codecs

    from episteme_core.text.decode import decode, encoding_for

    try:
        same = parsed_as is not None and codecs.lookup(parsed_as).name == encoding_for(content, charset)
    except LookupError:
        same = False
    return decode(content, charset) if same else None

