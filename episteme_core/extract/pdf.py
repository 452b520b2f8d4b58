"""The pdf extractor (pdfplumber): blocks with page and bbox in reading order, tables, form fields.

Reading order: words are grouped into lines; a page whose lines leave a clear vertical gutter is
read column by column (full-width lines above the columns first, those below last). Lines become
paragraphs at vertical gaps and at the end of a bold run; larger type or a wholly bold short
paragraph becomes a heading (``pdf_headings``). Tables: ruled and text-aligned (``pdf_tables``).
Words end at gaps measured against their type size too, so small type set without space characters
keeps its words (``pdf_words``).
Bounds: pages (``maxPages``), time (``timeLimitS``, checked between pages and inside each page's
layout) and drawing objects per page (``maxObjectsPerPage``, ``pdf_bounds``). Encrypted, scanned,
empty, corrupt and truncated files give status ``partial`` or ``failed`` with a diagnostic naming
the cause, never an exception.
"""

from __future__ import annotations

import io
import itertools
import logging
import math
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs

from episteme_core.extract.builder import DocumentBuilder
from episteme_core.extract.pdf_bounds import (
    DEFAULT_MAX_OBJECTS,
    PageDeadline,
    PageTooComplex,
    bounded_layout,
)
from episteme_core.extract.pdf_guard import (
    StreamDeadline,
    StreamTooLarge,
    bounded_streams,
    in_chain,
    reraise_cancellation,
)
from episteme_core.extract.pdf_headings import HeadingLevels, classify, font_family, is_bold, split_number
from episteme_core.extract.pdf_tables import FoundTable, find_tables, unplaced
from episteme_core.extract.pdf_words import extract_words
from episteme_core.records.evidence import Document
from episteme_core.records.extraction import ExtractRequest

DEFAULT_MAX_PAGES = 2000
DEFAULT_TIME_LIMIT_S = 300.0
DEFAULT_MAX_BYTES = 256 * 1024 * 1024


@attrs.define
class _Line:
    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float
    bold: bool = False
    font: str = ""


@attrs.define
class _Para:
    lines: list[_Line]

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        return (
            round(min(ln.x0 for ln in self.lines), 2),
            round(min(ln.top for ln in self.lines), 2),
            round(max(ln.x1 for ln in self.lines), 2),
            round(max(ln.bottom for ln in self.lines), 2),
        )

    @property
    def size(self) -> float:
        return max(line.size for line in self.lines)

    @property
    def bold(self) -> bool:
        return all(line.bold for line in self.lines)

    @property
    def style(self) -> tuple[str, float]:
        return (self.lines[0].font, round(self.size, 1))


class _LogCapture(logging.Handler):
    """pdfminer reports damage (bad streams, broken xref) through logging; keep those messages."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.messages) < 50:
            try:
                message = record.getMessage()
            except Exception:
                message = str(record.msg)
            if message not in self.messages:
                self.messages.append(message[:300])


@contextmanager
def _capture_pdfminer() -> Iterator[_LogCapture]:
    logger = logging.getLogger("pdfminer")
    handler = _LogCapture()
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)


def _rows(words: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Words grouped into rows sharing a baseline (close ``top``), each sorted left to right."""
    words = sorted(words, key=lambda w: (round(w["top"]), w["x0"]))
    rows: list[list[dict[str, Any]]] = []
    for word in words:
        if rows:
            last = rows[-1]
            height = max(1.0, last[0]["bottom"] - last[0]["top"])
            if abs(word["top"] - last[0]["top"]) <= height * 0.5:
                last.append(word)
                continue
        rows.append([word])
    for row in rows:
        row.sort(key=lambda w: w["x0"])
    return rows


def _line(words: list[dict[str, Any]]) -> _Line:
    return _Line(
        text=" ".join(w["text"] for w in words),
        x0=min(w["x0"] for w in words),
        top=min(w["top"] for w in words),
        x1=max(w["x1"] for w in words),
        bottom=max(w["bottom"] for w in words),
        size=max(float(w.get("size") or 0) for w in words),
        bold=all(w.get("bold", False) for w in words),
        font=str(words[0].get("font", "")),
    )


def _mark_fonts(words: list[dict[str, Any]]) -> None:
    """Give each word its font (of its first character) and whether all its characters are bold."""
    for word in words:
        chars = word.pop("chars", None) or []
        word["font"] = font_family(chars[0]["fontname"]) if chars else ""
        word["bold"] = bool(chars) and all(is_bold(c["fontname"]) for c in chars)


def _gutter(words: list[dict[str, Any]], width: float) -> float | None:
    """The x of a vertical gap (8 points or wider, between 30 and 70 % of the width) between two
    columns that almost no word crosses, or None. Counted per point with a difference array: a
    word crosses the band around x when it reaches within 4 points of x."""
    if len(words) < 40:
        return None
    lo, hi = int(width * 0.3), int(width * 0.7)
    if hi <= lo:
        return None
    diff = [0] * (hi - lo + 2)
    for w in words:
        a = max(lo, math.floor(w["x0"] - 4) + 1)
        b = min(hi, math.ceil(w["x1"] + 4) - 1)
        if a <= b:
            diff[a - lo] += 1
            diff[b - lo + 1] -= 1
    counts = list(itertools.accumulate(diff[:-1]))
    crossing = min(counts)
    start = counts.index(crossing)
    end = start
    while end + 1 < len(counts) and counts[end + 1] == crossing:
        end += 1
    x = float(lo + (start + end) / 2)
    left = sum(1 for w in words if w["x1"] <= x)
    right = sum(1 for w in words if w["x0"] >= x)
    if crossing <= max(3, len(words) // 50) and min(left, right) >= len(words) // 5:
        return x
    return None


def reading_order(words: list[dict[str, Any]], width: float) -> tuple[list[list[_Line]], bool]:
    """Lines in reading order: full-width lines above the columns, left column, right column,
    full-width lines below. A page without a gutter is one band."""
    rows = _rows(words)
    gutter = _gutter(words, width)
    if gutter is None:
        return [[_line(row) for row in rows]], False
    full: list[_Line] = []
    left: list[_Line] = []
    right: list[_Line] = []
    for row in rows:
        if any(w["x0"] < gutter < w["x1"] for w in row):
            full.append(_line(row))
            continue
        lhs = [w for w in row if w["x1"] <= gutter]
        rhs = [w for w in row if w["x0"] >= gutter]
        if lhs:
            left.append(_line(lhs))
        if rhs:
            right.append(_line(rhs))
    columns = left + right
    if not columns:
        return [full], False
    first_top = min(ln.top for ln in columns)
    last_bottom = max(ln.bottom for ln in columns)
    above = [ln for ln in full if ln.bottom <= first_top]
    below = [ln for ln in full if ln.top >= last_bottom]
    middle = [ln for ln in full if ln not in above and ln not in below]
    # full-width lines inside the column band (a wide caption) are read with the left column
    left = sorted(left + middle, key=lambda ln: ln.top)
    return [above, left, right, below], True


def paragraphs(lines: list[_Line]) -> list[_Para]:
    """Consecutive lines become one paragraph until a vertical gap, a change of type size, or
    the end of a bold run that opened the paragraph (a heading set in body size). A bold line
    after body lines stays in its paragraph (bold words in running text are not headings)."""
    out: list[_Para] = []
    if not lines:
        return out
    heights = [ln.bottom - ln.top for ln in lines if ln.bottom > ln.top]
    typical = statistics.median(heights) if heights else 10.0
    for line in lines:
        if out:
            previous = out[-1].lines[-1]
            gap = line.top - previous.bottom
            same_size = abs(line.size - previous.size) <= 0.6
            bold_run_ends = out[-1].bold and not line.bold
            if same_size and not bold_run_ends and -typical < gap <= typical * 0.6:
                out[-1].lines.append(line)
                continue
        out.append(_Para([line]))
    return out


def _body_size(lines: list[_Line]) -> float:
    """The type size most of the page's text is set in (weighted by characters)."""
    weight: dict[float, int] = {}
    for line in lines:
        if line.size:
            key = round(line.size, 1)
            weight[key] = weight.get(key, 0) + len(line.text)
    return max(sorted(weight), key=lambda k: weight[k]) if weight else 0.0


def _inside(word: dict[str, Any], box: tuple[float, float, float, float]) -> bool:
    cx = (word["x0"] + word["x1"]) / 2
    cy = (word["top"] + word["bottom"]) / 2
    return bool(box[0] <= cx <= box[2] and box[1] <= cy <= box[3])


def _decode(value: Any) -> str:
    from pdfminer.psparser import PSLiteral
    from pdfplumber.utils.pdfinternals import resolve_and_decode

    value = resolve_and_decode(value)
    if isinstance(value, PSLiteral):
        return str(value.name)
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, list):
        return ", ".join(_decode(v) for v in value)
    return str(value)


def form_fields(pdf: Any) -> list[dict[str, Any]]:
    """AcroForm fields: full dotted name, alternate name, value (None when absent), page objid."""
    from pdfplumber.utils.pdfinternals import resolve

    found: list[dict[str, Any]] = []
    try:
        acro = resolve(pdf.doc.catalog.get("AcroForm"))
    except Exception as exc:
        reraise_cancellation(exc)
        return found
    if not isinstance(acro, dict):
        return found

    stack: list[tuple[Any, str | None]] = [
        (field, None) for field in reversed(resolve(acro.get("Fields")) or [])]
    seen = 0
    while stack and seen < 10_000:
        seen += 1
        ref, prefix = stack.pop()
        field = resolve(ref)
        if not isinstance(field, dict):
            continue
        name = _decode(field["T"]) if "T" in field else None
        full = ".".join(p for p in (prefix, name) if p)
        kids = resolve(field.get("Kids")) or []
        for kid in reversed(kids):
            stack.append((kid, full or prefix))
        if name is None:
            continue
        value = _decode(field["V"]) if field.get("V") is not None else None
        page_ref = field.get("P") or next(
            (resolve(k).get("P") for k in kids if isinstance(resolve(k), dict) and resolve(k).get("P")),
            None,
        )
        found.append({
            "name": full,
            "alternateName": _decode(field["TU"]) if "TU" in field else None,
            "value": value,
            "type": _decode(field["FT"]) if "FT" in field else None,
            "pageObjid": getattr(page_ref, "objid", None),
        })
    return found


class PdfExtractor:
    """The builtin ``pdf`` extractor (pdfplumber)."""

    name = "pdf"
    version = "3"  # 2: bold headings, text-aligned tables, bounds inside a page; 3: gaps by type size
    content_types = ("application/pdf",)
    limits = ("no-ocr", "images-not-read", "annotations-not-read")
    option_names = ("maxPages", "timeLimitS", "maxBytes", "maxObjectsPerPage")

    def extract(self, request: ExtractRequest) -> Document:
        builder = DocumentBuilder(request, extractor=self.name, extractor_version=self.version,
                                  document_type=getattr(request.family, "document_type", None) or "pdf",
                                  limits=self.limits)
        options = request.options
        max_pages = int(options.get("maxPages", DEFAULT_MAX_PAGES))
        limit_s = float(options.get("timeLimitS", DEFAULT_TIME_LIMIT_S))
        max_objects = int(options.get("maxObjectsPerPage", DEFAULT_MAX_OBJECTS))
        content = request.content
        if not content:
            builder.fail("EMPTY", "the PDF is empty (0 bytes)")
            return builder.build()
        if len(content) > int(options.get("maxBytes", DEFAULT_MAX_BYTES)):
            builder.fail("TOO_LARGE", f"the PDF is {len(content)} bytes, more than the bound")
            return builder.build()
        if not content.lstrip()[:1024].find(b"%PDF-") >= 0:
            builder.fail("NOT_A_PDF", "the bytes do not start with a %PDF- header")
            return builder.build()
        deadline = time.monotonic() + limit_s
        with _capture_pdfminer() as log, bounded_streams(deadline):
            try:
                self._extract(request, builder, max_pages, deadline, max_objects)
            except Exception as exc:  # damaged files raise anything: report, never crash
                reraise_cancellation(exc)
                code, message = _guarded(exc) or _classify(exc)
                if builder.diagnostics or any(s for s in builder._sections):
                    builder.diagnose(code, "error", message)
                    builder.partial()
                else:
                    builder.fail(code, message)
        for message in log.messages:
            builder.diagnose("PDF_DAMAGED", "warning", f"pdfminer: {message}")
        if log.messages:
            builder.partial()
        return builder.build()

    def _extract(self, request: ExtractRequest, builder: DocumentBuilder, max_pages: int,
                 deadline: float, max_objects: int) -> None:
        import pdfplumber

        with pdfplumber.open(io.BytesIO(request.content)) as pdf:
            metadata = pdf.metadata or {}
            title = metadata.get("Title")
            if isinstance(title, bytes):
                title = title.decode("latin-1", "replace")
            if isinstance(title, str) and title.strip():
                builder.title = " ".join(title.split())
            page_count = len(pdf.pages)
            builder.attributes["pageCount"] = page_count
            pages_without_text = []
            page_objids: dict[Any, int] = {}
            levels = HeadingLevels()
            for index, page in enumerate(pdf.pages, start=1):
                page_objids[getattr(page.page_obj, "pageid", None)] = index
                if index > max_pages:
                    builder.diagnose("PAGE_LIMIT", "error",
                                     f"only the first {max_pages} of {page_count} pages were read")
                    break
                if time.monotonic() > deadline:
                    builder.diagnose("TIME_LIMIT", "error",
                                     f"the time bound was reached; pages {index}-{page_count} not read")
                    break
                try:
                    bounded_layout(page, deadline, max_objects)
                    had_text = self._page(page, index, builder, levels, deadline)
                except PageDeadline:
                    builder.diagnose("TIME_LIMIT", "error", f"the time bound was reached inside page {index};"
                                     f" pages {index}-{page_count} not read", page=index)
                    page.close()
                    break
                except PageTooComplex as exc:
                    builder.diagnose("PAGE_TOO_COMPLEX", "error",
                                     f"page {index} not read: {exc}", page=index)
                    page.close()
                    continue
                except Exception as exc:
                    reraise_cancellation(exc)
                    guarded = _guarded(exc)
                    code, message = guarded or _classify(exc)
                    builder.diagnose(code, "error", f"page {index}: {message}", page=index)
                    if guarded and (code == "TIME_LIMIT" or _spent(exc)):
                        break  # the time or the document's stream budget is gone: stop reading
                    continue
                finally:
                    page.close()
                if not had_text:
                    pages_without_text.append(index)
            if pages_without_text:
                scanned = len(pages_without_text) == page_count
                builder.diagnose(
                    "NO_TEXT_LAYER", "error" if scanned else "warning",
                    f"no text layer on page(s) {', '.join(map(str, pages_without_text[:20]))}"
                    " (scanned images need OCR, which episteme does not do)",
                )
                if not scanned:
                    builder.partial()
            self._forms(pdf, builder, page_objids)

    def _page(self, page: Any, number: int, builder: DocumentBuilder, levels: HeadingLevels,
              deadline: float) -> bool:
        words = extract_words(page.chars, extra_attrs=["size"], return_chars=True)
        if not words:
            return False
        _mark_fonts(words)
        if time.monotonic() > deadline:
            raise PageDeadline()
        tables = find_tables(page, words)
        boxes = [t.bbox for t in tables]
        free = [w for w in words if not any(_inside(w, box) for box in boxes)] if boxes else words
        if tables:  # words in a table's box that no cell holds stay running text: nothing is lost
            free = free + unplaced(tables, words)
        bands, columns = reading_order(free, float(page.width))
        body = _body_size([line for band in bands for line in band])
        confidence = 0.8 if columns else None
        pending_tables = list(tables)
        for band in bands:
            paras = paragraphs(band)
            for i, para in enumerate(paras):
                while pending_tables and pending_tables[0].bbox[1] < para.bbox[1] and not columns:
                    self._table(pending_tables.pop(0), number, builder)
                text = para.text
                box = para.bbox
                following = None
                if i + 1 < len(paras):
                    after = paras[i + 1]
                    following = (after.text, len(after.lines), after.bbox[1] - box[3])
                heading, number_text = classify(text, len(para.lines), para.size, para.bold, body,
                                                box[3] - box[1], following)
                if heading:
                    flat = " ".join(text.split())
                    title = split_number(flat)[1] if number_text else flat
                    level = levels.level(number_text, para.style, builder.current_level)
                    builder.open_section(title, level, anchor=None, number=number_text)
                    kind = "heading"
                else:
                    kind = "paragraph"
                builder.add_block(kind, text, anchor=f"page={number}", page=number, bbox=para.bbox,
                                  confidence=confidence, anchor_is_id=False)
        for table in pending_tables:
            self._table(table, number, builder)
        return True

    def _table(self, table: FoundTable, number: int, builder: DocumentBuilder) -> None:
        builder.add_block("table", "\n".join("\t".join(row) for row in table.rows), anchor=f"page={number}",
                          page=number, bbox=table.bbox, rows=table.rows, anchor_is_id=False,
                          attributes={"strategy": table.strategy})

    def _forms(self, pdf: Any, builder: DocumentBuilder, page_objids: dict[Any, int]) -> None:
        fields = form_fields(pdf)
        if not fields:
            return
        builder.open_section("Form fields", 1, anchor="form-fields")
        for field in fields:
            value = field["value"]
            page = page_objids.get(field["pageObjid"])
            text = f"{field['name']}: {value if value is not None else '(no value)'}"
            builder.add_block(
                "form_field", text, anchor=f"page={page}" if page else None, page=page, anchor_is_id=False,
                attributes={
                    "name": field["name"],
                    "alternateName": field["alternateName"],
                    "fieldType": field["type"],
                    "value": value,
                    "valueState": "value-present" if value is not None else "not-observed",
                },
            )


def _guarded(exc: BaseException) -> tuple[str, str] | None:
    """The diagnostic of a bound ``pdf_guard`` enforced (anywhere in the cause chain), or None."""
    if in_chain(exc, StreamDeadline) is not None:
        return "TIME_LIMIT", "the time bound was reached while a stream was decoded"
    too_large = in_chain(exc, StreamTooLarge)
    if too_large is not None:
        return "STREAM_TOO_LARGE", f"not read: {too_large} (a compression bomb?)"
    return None


def _spent(exc: BaseException) -> bool:
    too_large = in_chain(exc, StreamTooLarge)
    return isinstance(too_large, StreamTooLarge) and too_large.total


def _classify(exc: BaseException) -> tuple[str, str]:
    """A diagnostic code and message naming why a PDF could not be read."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < 5:
        chain.append(current)
        current = current.__cause__ or current.__context__
    names = " ".join(type(e).__name__ for e in chain)
    text = " ".join(str(e) for e in chain)
    if "PDFPasswordIncorrect" in names or "password" in text.lower() or "Encrypt" in names:
        return "ENCRYPTED", "the PDF is encrypted and no password was given"
    if "PSEOF" in names or "Unexpected EOF" in text or "EOF" in text:
        return "TRUNCATED", f"the PDF ends early (truncated?): {type(exc).__name__}: {exc}"[:400]
    if "PDFSyntaxError" in names or "No /Root" in text or "xref" in text.lower():
        return "MALFORMED", f"the PDF is malformed: {type(exc).__name__}: {exc}"[:400]
    return "UNREADABLE", f"the PDF could not be read: {type(exc).__name__}: {exc}"[:400]
