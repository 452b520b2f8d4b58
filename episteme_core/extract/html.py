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

from episteme_core.document import Document
from episteme_core.extract.api import ExtractRequest
from episteme_core.extract.builder import DocumentBuilder

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


class _Stop(Exception):
    """Parsing stopped at a bound (depth or time)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _bounded_tree_builder(max_depth: int, deadline: float) -> Any:
    """html5lib's etree builder, refusing nesting past ``max_depth`` and work past ``deadline``."""
    import html5lib

    base: Any = html5lib.getTreeBuilder("etree")

    class Bounded(base):  # type: ignore[misc, valid-type]
        def _check(self) -> None:
            if len(self.openElements) >= max_depth:
                raise _Stop("NESTING_TOO_DEEP", f"elements nested deeper than {max_depth}")
            if time.monotonic() > deadline:
                raise _Stop("TIME_LIMIT", "the time bound was reached while parsing")

        def insertElementNormal(self, token: Any) -> Any:  # noqa: N802 (html5lib's name)
            self._check()
            return super().insertElementNormal(token)

        def insertElementTable(self, token: Any) -> Any:  # noqa: N802
            self._check()
            return super().insertElementTable(token)

    return Bounded


def parse_html(content: bytes, charset: str | None, max_depth: int, deadline: float) -> Any:
    """The document element (xml.etree) of ``content``; raises ``_Stop`` at a bound."""
    import html5lib

    parser = html5lib.HTMLParser(
        tree=_bounded_tree_builder(max_depth, deadline), namespaceHTMLElements=False
    )
    kwargs: dict[str, Any] = {}
    if charset:
        kwargs["transport_encoding"] = charset
    return parser.parse(content, **kwargs)


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


def _classes(el: Any) -> set[str]:
    return set((el.get("class") or "").split())


def collapse(text: str) -> str:
    """Whitespace as a browser renders it: runs of space, tab and newline become one space."""
    return _WS.sub(" ", text).strip()


@attrs.define
class _Ctx:
    normativity: str | None = None  # forced by an ancestor's class
    kind: str | None = None  # forced kind (note, example)


class HtmlWalker:
    """Walks one parsed tree into a DocumentBuilder, following a family's rules."""

    def __init__(self, builder: DocumentBuilder, rules: dict[str, Any], family: Any) -> None:
        self.b = builder
        self.family = family
        merged = {**DEFAULT_RULES, **rules}
        self.prune = _parse_selectors(merged["prune"])
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
        classes = _classes(el)
        return bool(classes & SKIP_IN_TEXT_CLASSES) or _matches(el, self.prune, classes)

    def _text_parts(self, el: Any, out: list[str], skip_classes: frozenset[str] = frozenset()) -> None:
        """Inline text of ``el`` with a newline at each block boundary (iterative: no recursion)."""
        stack: list[tuple[Any, bool]] = [(el, False)]
        while stack:
            node, closing = stack.pop()
            if closing:
                if node.tag in BLOCK_TAGS or node.tag == "br":
                    out.append(_BREAK)
                if node.tail and node is not el:
                    out.append(node.tail)
                continue
            if node is not el and (self._skip(node) or _classes(node) & skip_classes):
                if node.tail:
                    out.append(node.tail)
                continue
            if node.tag in BLOCK_TAGS and node is not el:
                out.append(_BREAK)
            if node.text:
                out.append(node.text)
            stack.append((node, True))
            for child in reversed(list(node)):
                stack.append((child, False))

    def text(self, el: Any, skip_classes: frozenset[str] = frozenset()) -> str:
        parts: list[str] = []
        self._text_parts(el, parts, skip_classes)
        lines = [collapse(line) for line in "".join(parts).split(_BREAK)]
        return "\n".join(line for line in lines if line)

    def pre_text(self, el: Any) -> str:
        """Preformatted text exactly as written (inner whitespace kept, edges trimmed)."""
        parts: list[str] = []
        stack: list[tuple[Any, bool]] = [(el, False)]
        while stack:
            node, closing = stack.pop()
            if closing:
                if node.tail and node is not el:
                    parts.append(node.tail)
                continue
            if node is not el and self._skip(node):
                if node.tail:
                    parts.append(node.tail)
                continue
            if node.text:
                parts.append(node.text)
            stack.append((node, True))
            for child in reversed(list(node)):
                stack.append((child, False))
        return "".join(parts).strip("\n").rstrip()

    def ids_in(self, el: Any, limit: int = 256) -> list[str]:
        """Every id (and ``a[name]``) inside ``el``, ``dfn`` ids first: they become the block's anchors."""
        found: list[str] = []
        dfns: list[str] = []
        for node in el.iter():
            if not isinstance(node.tag, str):
                continue
            value = node.get("id") or (node.get("name") if node.tag == "a" else None)
            if value and not value.startswith(("respec-", "dfn-panel-", "infopanel-")):
                (dfns if node.tag == "dfn" else found).append(value)
                if len(found) + len(dfns) >= limit:
                    break
        return dfns + [v for v in found if not v.startswith("ref-for-")] + [
            v for v in found if v.startswith("ref-for-")]

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
        title = self.text(el, frozenset(self.number_classes)).replace("\n", " ").strip()
        if not title and number is None:
            return
        ids = self.ids_in(el)
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
        self.b.add_block("heading", (f"{number} {title}" if number else title).strip(),
                         anchor=el.get("id") or anchor, anchors=extra, normativity=normativity)
        if NON_NORMATIVE_LINE.match(title):
            self.b.mark_section("informative")

    def leaf(self, el: Any, kind: str, ctx: _Ctx, **extra: Any) -> None:
        text = self.pre_text(el) if kind in ("code", "grammar", "idl") else self.text(el)
        ids = self.ids_in(el)
        anchor = el.get("id") or (ids[0] if ids else None)
        if kind == "paragraph" and ctx.kind:
            kind = ctx.kind
        block = self.b.add_block(kind, text, anchor=anchor, anchors=ids,
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
            inline.append(el.text)
        for child in el:
            tag = child.tag
            if not isinstance(tag, str):
                if child.tail and child.tail.strip():
                    inline.append(child.tail)
                continue
            if self._skip(child):
                if child.tail and child.tail.strip():
                    inline.append(child.tail)
                continue
            if tag in BLOCK_TAGS:
                self.flush(inline, ctx)
                inline = []
                self.element(child, ctx)
                if child.tail and child.tail.strip():
                    inline.append(child.tail)
            else:
                inline.append(child)
        self.flush(inline, ctx)

    def flush(self, inline: list[Any], ctx: _Ctx) -> None:
        if not inline:
            return
        parts: list[str] = []
        anchors: list[str] = []
        for item in inline:
            if isinstance(item, str):
                parts.append(item)
            else:
                self._text_parts(item, parts)
                if item.tail:
                    parts.append(item.tail)
                anchors.extend(self.ids_in(item))
        text = "\n".join(t for t in (collapse(x) for x in "".join(parts).split(_BREAK)) if t)
        self.b.add_block(ctx.kind or "paragraph", text, anchor=anchors[0] if anchors else None,
                         anchors=anchors, normativity=ctx.normativity)

    def element(self, el: Any, ctx: _Ctx) -> None:
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
        own = self.text(_Shell(el, *nested)) if nested else self.text(el)
        ids = self.ids_in(_Shell(el, *nested)) if nested else self.ids_in(el)
        anchor = el.get("id") or (ids[0] if ids else None)
        self.b.add_block(ctx.kind or "list_item", own, anchor=anchor, anchors=ids,
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
                texts.append(self.text(child).replace("\n", " "))
                anchors.extend(self.ids_in(child))
            elif child.tag == "dd":
                texts.append(self.text(child))
                anchors.extend(self.ids_in(child))
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
    version = "1"
    content_types = ("text/html", "application/xhtml+xml")
    limits = ("scripts-not-run", "images-not-read", "styles-ignored")
    option_names = ("maxBytes", "maxDepth", "timeLimitS")

    def extract(self, request: ExtractRequest) -> Document:
        builder = DocumentBuilder(request, extractor=self.name, extractor_version=self.version,
                                  document_type=getattr(request.family, "document_type", None),
                                  limits=self.limits)
        options = request.options
        max_bytes = int(options.get("maxBytes", DEFAULT_MAX_BYTES))
        max_depth = int(options.get("maxDepth", DEFAULT_MAX_DEPTH))
        limit_s = float(options.get("timeLimitS", DEFAULT_TIME_LIMIT_S))
        if len(request.content) > max_bytes:
            builder.fail("TOO_LARGE", f"the HTML is {len(request.content)} bytes, more than the "
                                      f"bound of {max_bytes}")
            return builder.build()
        try:
            document = parse_html(request.content, request.record.charset, max_depth,
                                  time.monotonic() + limit_s)
        except _Stop as stop:
            builder.fail(stop.code, f"HTML not extracted: {stop.message}")
            return builder.build()
        except RecursionError:
            builder.fail("NESTING_TOO_DEEP", "HTML not extracted: nesting too deep")
            return builder.build()
        for title in document.iter("title"):
            builder.title = collapse("".join(title.itertext())) or None
            break
        hook = getattr(request.family, "structure_html", None)
        if hook is not None and hook(document, builder):
            return builder.build()
        rules = dict(getattr(request.family, "rules", {}) or {})
        walker = HtmlWalker(builder, rules, request.family)
        try:
            walker.element(walker.root(document), _Ctx())
        except RecursionError:
            builder.diagnose("NESTING_TOO_DEEP", "error", "part of the HTML was nested too deeply to read")
        return builder.build()
