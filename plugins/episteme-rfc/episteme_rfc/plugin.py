"""The ``rfc`` family: RFC Editor paginated text, RFC XML v2 and v3, and xml2rfc/htmlized HTML.

Sections keep their numbers and get the RFC Editor's fragments (``#section-3.2``; paragraphs
``#section-3.2-1``), run-in headings too ("3. SHOULD   This word, ..." in RFC 2119: section 3,
"SHOULD"). Page headers and footers of paginated text are removed. Blocks that use a
BCP 14 keyword (MUST, SHOULD, MAY, ...) are marked normative; the others informative.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from episteme_core.api import BaseFamily, Register, hookimpl

BCP14 = re.compile(
    r"\b(MUST NOT|MUST|REQUIRED|SHALL NOT|SHALL|SHOULD NOT|SHOULD|NOT RECOMMENDED|RECOMMENDED|"
    r"MAY|OPTIONAL)\b"
)
_FOOTER = re.compile(r"\[Page \d+\]\s*$")
_HEADER = re.compile(r"^(RFC|Internet-Draft|INTERNET-DRAFT)\b.*\S\s{2,}\S")
# A title runs from its first to its last non-space character (possessive runs: linear in the line).
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+(\S(?:[^\S\n]*+\S)*+)\s*$")
# A run-in heading: a numbered section whose title is a capitalised term and whose text follows on
# the same line after a wide gap (RFC 2119: "3. SHOULD   This word, or the adjective ...").
_RUN_IN = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+([A-Z][A-Z0-9]*(?: [A-Z][A-Z0-9]*)*)\s{3,}(?=\S)")
_APPENDIX = re.compile(r"^Appendix\s+([A-Z](?:\.\d+)*)\.?\s+(\S(?:[^\S\n]*+\S)*+)\s*$")
_UNNUMBERED = frozenset({
    "abstract", "status of this memo", "copyright notice", "table of contents", "references",
    "normative references", "informative references", "author's address", "authors' addresses",
    "acknowledgements", "acknowledgments", "contributors", "index", "full copyright statement",
    "intellectual property", "acknowledgement",
})


def _slug(number: str) -> str:
    return f"section-{number}"


class RfcFamily(BaseFamily):
    name = "rfc"
    version = "2"
    authority = "normative"
    document_type = "rfc"
    hosts = ("rfc-editor.org", "ietf.org")
    rules = {
        "prune": ["nav", "#toc", ".toc", "#external-metadata", "#internal-metadata", "header",
                  "footer"],
        "root": ["main", "body"],
        "numberClasses": ["section-number", "secno"],
        "informativeClasses": ["note", "informative", "non-normative"],
        "exampleClasses": ["example"],
        "normativeClasses": [],
        "bcp14": "uppercase keywords mark normative blocks; others informative",
    }

    def matches(self, url: str) -> bool:
        return super().matches(url) or bool(re.search(r"/rfc\d+(\.\w+)?$", url.split("#")[0]))

    # blocks ---------------------------------------------------------------

    def refine_block(self, block: Any, section: Any) -> Any:
        if block.kind in ("heading",):
            return attrs.evolve(block, normativity="informative")
        found = sorted(set(BCP14.findall(block.text))) if _has_keyword(block.text) else []
        if found:
            return attrs.evolve(block, normativity="normative",
                                attributes={**block.attributes, "bcp14": found})
        if block.normativity == "normative":
            return attrs.evolve(block, normativity="informative")
        return block

    # paginated text -------------------------------------------------------

    def structure_text(self, text: str, builder: Any, *, spans: bool = True) -> bool:
        head = text[:4000]
        if "Request for Comments" not in head and not _FOOTER.search(text[:20000]):
            return False
        lines = _kept_lines(text)
        self._layout(lines, builder, spans)
        return True

    def _layout(self, lines: list[tuple[int, str]], builder: Any, spans: bool) -> None:
        title_done = False
        current: str | None = None
        counter = 0
        paragraph: list[tuple[int, str]] = []
        hanging = False  # the paragraph's first line follows a run-in heading (no indent of its own)

        def flush() -> None:
            nonlocal counter, hanging
            if not paragraph:
                return
            rest = paragraph[1:] if hanging and len(paragraph) > 1 else paragraph
            indent = min(len(t) - len(t.lstrip()) for _, t in rest)
            first_hangs = hanging
            body = "\n".join(t[0 if first_hangs and i == 0 else indent:].rstrip()
                              for i, (_, t) in enumerate(paragraph))
            hanging = False
            counter += 1
            anchor = f"{current}-{counter}" if current else None
            kind = "code" if indent >= 6 and current else "paragraph"
            start = paragraph[0][0] + (0 if first_hangs else indent)
            end = paragraph[-1][0] + len(paragraph[-1][1].rstrip())
            builder.add_block(kind, body, anchor=anchor, span=(start, end) if spans else None)
            paragraph.clear()

        for offset, line in lines:
            stripped = line.strip()
            if not stripped:
                flush()
                continue
            at_margin = not line[:1].isspace()
            run_in = _RUN_IN.match(line) if at_margin else None
            if run_in is not None:
                flush()
                number, name = run_in.group(1), run_in.group(2)
                current, counter = _slug(number), 0
                builder.open_section(name, number.count(".") + 1, anchor=current, number=number)
                head = line[:run_in.end()].rstrip()
                builder.add_block("heading", head if spans else f"{number}. {name}", anchor=None,
                                  span=(offset, offset + len(head)) if spans else None)
                title_done = True
                # the text after the term starts the section's first paragraph, at its own column
                paragraph.append((offset + run_in.end(), line[run_in.end():]))
                hanging = True
                continue
            heading = _heading(line) if at_margin else None
            if heading is not None:
                flush()
                number, name, level = heading
                current = _slug(number) if number else _slug(_anchor_name(name))
                counter = 0
                builder.open_section(name, level, anchor=current, number=number)
                text = f"{number}. {name}" if number and not number.startswith("appendix") else name
                builder.add_block("heading", stripped if spans else text, anchor=None,
                                  span=(offset, offset + len(line.rstrip())) if spans else None)
                title_done = True
                continue
            if not title_done and at_margin is False and stripped and builder.title is None \
                    and len(line) - len(line.lstrip()) > 4 and not paragraph:
                builder.title = stripped
            paragraph.append((offset, line))
        flush()

    # HTML ---------------------------------------------------------------------

    def structure_html(self, root: Any, builder: Any) -> bool:
        """htmlized RFCs hold the whole text in ``<pre>``: lay it out as paginated text."""
        pres = [el for el in root.iter("pre")]
        text = "".join("".join(pre.itertext()) for pre in pres)
        if not pres or len(text) < 2000 or not _FOOTER.search(text):
            return False
        lines = _kept_lines(text.replace("\r\n", "\n"))
        self._layout(lines, builder, spans=False)
        builder.diagnose("SPANS_NOT_KEPT", "info",
                         "text laid out from <pre>; spans are not offsets into the HTML")
        return True

    # XML v2 and v3 --------------------------------------------------------------

    def structure_xml(self, root: Any, text: str, builder: Any) -> bool:
        if _local(root.tag) != "rfc":
            return False
        self._labels = _xref_labels(root)
        front = root.find("front")
        if front is not None:
            title = front.find("title")
            if title is not None:
                builder.title = _collapse("".join(title.itertext()))
            abstract = front.find("abstract")
            if abstract is not None:
                builder.open_section("Abstract", 1, anchor="section-abstract")
                builder.add_block("heading", "Abstract", anchor=None)
                self._children(abstract, "section-abstract", builder)
        middle = root.find("middle")
        if middle is not None:
            self._sections(middle, "", 1, builder)
        back = root.find("back")
        if back is not None:
            appendix = 0
            for child in back:
                tag = _local(child.tag)
                if tag == "section":
                    appendix += 1
                    self._section(child, f"appendix.{chr(64 + min(appendix, 26))}", 1, builder)
                elif tag == "references":
                    self._references(child, builder)
        return True

    def _sections(self, parent: Any, prefix: str, level: int, builder: Any) -> None:
        n = 0
        for child in parent:
            if _local(child.tag) == "section":
                n += 1
                self._section(child, f"{prefix}{n}", level, builder)

    def _section(self, el: Any, number: str, level: int, builder: Any) -> None:
        name_el = el.find("name")
        name = _collapse("".join(name_el.itertext())) if name_el is not None else el.get("title", "")
        anchor = _slug(number)
        shown = number.replace("appendix.", "Appendix ")
        builder.open_section(name, level, anchor=anchor, number=shown)
        builder.add_block("heading", f"{shown}. {name}", anchor=None,
                          anchors=[a for a in [el.get("anchor")] if a])
        self._children(el, anchor, builder)
        self._sections(el, f"{number}.", level + 1, builder)

    def _children(self, el: Any, anchor: str, builder: Any) -> None:
        k = 0
        for child in el:
            tag = _local(child.tag)
            if tag in ("section", "name") or tag in _NOT_RENDERED or not isinstance(child.tag, str):
                continue
            k += 1
            pn = f"{anchor}-{k}"
            extra = [a for a in [child.get("anchor")] if a]
            if tag in ("artwork", "sourcecode"):
                builder.add_block("code", _raw(child), anchor=pn, anchors=extra)
            elif tag == "figure":
                for art in child.iter():
                    if _local(art.tag) in ("artwork", "sourcecode"):
                        builder.add_block("code", _raw(art), anchor=pn, anchors=extra)
                        break
            elif tag in ("ul", "ol"):
                for li in child:
                    builder.add_block("list_item", self._text(li), anchor=None)
            elif tag in ("table", "texttable"):
                rows = _table(child)
                builder.add_block("table", "\n".join("\t".join(r) for r in rows), anchor=pn, rows=rows)
            elif tag in ("note", "aside"):
                builder.add_block("note", self._text(child), anchor=pn, anchors=extra)
            else:
                builder.add_block("paragraph", self._text(child), anchor=pn, anchors=extra)

    def _text(self, el: Any) -> str:
        """An element's text as xml2rfc shows it: an empty ``xref`` becomes "Section 3.2" or
        "[URI]", an empty ``eref`` its URL; index entries and aliases show nothing."""
        return _collapse("".join(_rendered(el, getattr(self, "_labels", {}))))

    def _references(self, el: Any, builder: Any) -> None:
        name_el = el.find("name")
        name = (_collapse("".join(name_el.itertext())) if name_el is not None
                else el.get("title", "References"))
        builder.open_section(name or "References", 1, anchor=None)
        for ref in el.iter():
            if _local(ref.tag) == "reference":
                title = ref.find("front/title")
                text = _collapse("".join(title.itertext())) if title is not None else ""
                builder.add_block("paragraph", f"[{ref.get('anchor', '')}] {text}".strip(),
                                  anchor=ref.get("anchor"))


def _kept_lines(text: str) -> list[tuple[int, str]]:
    """(offset, line) of every line except page footers, form feeds and page headers."""
    out: list[tuple[int, str]] = []
    offset = 0
    after_break = False
    for raw in text.split("\n"):
        line_offset = offset
        offset += len(raw) + 1
        line = raw
        if "\f" in line:
            after_break = True
            line = line.replace("\f", "")
            line_offset += raw.index("\f") + 1 if raw.startswith("\f") else 0
            if not line.strip():
                continue
        if _FOOTER.search(line) and not line[:1].isspace():
            # drop the footer and the blank lines right before it
            while out and not out[-1][1].strip():
                out.pop()
            continue
        if after_break:
            if not line.strip():
                continue
            after_break = False
            if _HEADER.match(line):
                continue
        out.append((line_offset, line))
    return out


def _heading(line: str) -> tuple[str | None, str, int] | None:
    match = _NUMBERED.match(line)
    if match and len(match.group(2)) < 100 and not match.group(2).endswith((".", ",")) or (
            match and match.group(2)[:1].isupper() and len(match.group(2)) < 80):
        number = match.group(1)
        if re.search(r"\S {3,}\S", match.group(2)):
            return None  # "1. MUST   This word, ...": a numbered definition, not a heading
        if "  " in match.group(2) and match.group(2).rstrip()[-1:].isdigit():
            return None  # a table-of-contents line
        return number, match.group(2), number.count(".") + 1
    match = _APPENDIX.match(line)
    if match:
        return f"appendix.{match.group(1)}", match.group(2), match.group(1).count(".") + 1
    if line.strip().lower().rstrip(":") in _UNNUMBERED:
        return None, line.strip(), 1
    return None


def _anchor_name(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _collapse(text: str) -> str:
    return re.sub(r"[ \t\n\r\f]+", " ", text).strip()


def _raw(el: Any) -> str:
    return "".join(el.itertext()).strip("\n").rstrip()


def _table(el: Any) -> list[list[str]]:
    rows: list[list[str]] = []
    if _local(el.tag) == "texttable":  # v2: ttcol headers then c cells
        cols = [_collapse("".join(c.itertext())) for c in el if _local(c.tag) == "ttcol"]
        cells = [_collapse("".join(c.itertext())) for c in el if _local(c.tag) == "c"]
        if cols:
            rows.append(cols)
            rows.extend(cells[i:i + len(cols)] for i in range(0, len(cells), len(cols)))
        return rows
    for tr in el.iter():
        if _local(tr.tag) == "tr":
            rows.append([_collapse("".join(c.itertext())) for c in tr if _local(c.tag) in ("td", "th")])
    return rows


@hookimpl
def episteme_extractors(register: Register) -> None:
    register(RfcFamily(), kind="family")


_KEYWORD_WORDS = ("MUST", "SHALL", "SHOULD", "MAY", "REQUIRED", "RECOMMENDED", "OPTIONAL")


def _has_keyword(text: str) -> bool:
    """A cheap test (substring search) before the keyword regex: most blocks have none."""
    return any(word in text for word in _KEYWORD_WORDS)


_NOT_RENDERED = frozenset({"iref", "anchor-alias", "displayreference", "cref", "x-has", "source"})


def _xref_labels(root: Any) -> dict[str, str]:
    """What an empty ``<xref target>`` shows: "Section N" for a section, "[NAME]" for a reference
    (its ``displayreference``, else its anchor)."""
    labels: dict[str, str] = {}

    def number(parent: Any, prefix: str) -> None:
        n = 0
        for child in parent:
            if _local(child.tag) == "section":
                n += 1
                if child.get("anchor"):
                    labels[child.get("anchor")] = f"Section {prefix}{n}"
                number(child, f"{prefix}{n}.")

    middle = root.find("middle")
    if middle is not None:
        number(middle, "")
    shown = {d.get("target"): d.get("to") for d in root.iter() if _local(d.tag) == "displayreference"}
    labels.update({target: f"[{to}]" for target, to in shown.items() if target and to})
    back = root.find("back")
    if back is not None:
        appendix = 0
        for child in back:
            if _local(child.tag) == "section":
                appendix += 1
                letter = chr(64 + min(appendix, 26))
                if child.get("anchor"):
                    labels[child.get("anchor")] = f"Appendix {letter}"
        for ref in back.iter():
            if _local(ref.tag) == "reference" and ref.get("anchor"):
                labels[ref.get("anchor")] = f"[{shown.get(ref.get('anchor')) or ref.get('anchor')}]"
    return labels


def _rendered(el: Any, labels: dict[str, str]) -> list[str]:
    """The text pieces of ``el`` in document order, with empty cross-references rendered."""
    out: list[str] = []

    def visit(node: Any, top: bool) -> None:
        tag = _local(node.tag)
        if not top and (tag in _NOT_RENDERED or not isinstance(node.tag, str)):
            pass
        elif tag in ("xref", "relref") and not "".join(node.itertext()).strip():
            out.append(_xref(node, labels))
        elif tag == "eref" and not "".join(node.itertext()).strip():
            out.append(f"<{node.get('target', '')}>")
        else:
            if node.text:
                out.append(node.text)
            for child in node:
                visit(child, False)
        if not top and node.tail:
            out.append(node.tail)

    visit(el, True)
    return out


def _xref(node: Any, labels: dict[str, str]) -> str:
    target = str(node.get("target", ""))
    label = labels.get(target, target)
    section = str(node.get("section") or "")
    if not section:
        return label
    form = node.get("sectionFormat", "of")
    if form == "bare":
        return section
    kind = "Appendix" if section[:1].isalpha() else "Section"
    if form == "comma":
        return f"{label}, {kind} {section}"
    if form == "parens":
        return f"{label} ({kind} {section})"
    return f"{kind} {section} of {label}"
