"""Books: plain-text and Markdown files in a folder, one record ``book:<corpus>/<book>`` each."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from episteme_core.errors import EpistemeError
from episteme_core.personal import frontmatter
from episteme_core.personal.limits import BOOK_MAX_BYTES, BOOK_MAX_PARAGRAPHS
from episteme_core.personal.model import (
    Paragraph,
    Record,
    check_record_id,
    parse_time,
)
from episteme_core.personal.plaintext import (
    decode_text,
    fs_segment,
    fs_text,
    looks_binary,
    name_is_utf8,
    normalise_newlines,
    paragraph_spans,
    parse_front_matter,
)
from episteme_core.personal.safe_open import Refused, read_checked
from episteme_core.personal.spans import SpanParagraphs, TextSpans
from episteme_core.records.canonical import sha256_hex

SOURCE = "books"
TEXT_SUFFIXES = (".txt", ".text")
MARKDOWN_SUFFIXES = (".md", ".markdown")
DEFAULT_MAX_BYTES = BOOK_MAX_BYTES
DEFAULT_MAX_PARAGRAPHS = BOOK_MAX_PARAGRAPHS

_START = re.compile(
    r"^[ \t]*\*{3}[ \t]*START OF (?:THE|THIS) PROJECT GUTENBERG E-?BOOK\b.*$", re.IGNORECASE | re.MULTILINE
)
_END = re.compile(
    r"^[ \t]*\*{3}[ \t]*END OF (?:THE|THIS) PROJECT GUTENBERG E-?BOOK\b.*$", re.IGNORECASE | re.MULTILINE
)
_END_OLD = re.compile(
    r"^[ \t]*End of (?:the )?Project Gutenberg(?:'s)?\b.*$", re.IGNORECASE | re.MULTILINE
)
_HEADER_FIELDS = {
    "title": re.compile(r"^Title:\s*(.+)$", re.MULTILINE),
    "author": re.compile(r"^Author:\s*(.+)$", re.MULTILINE),
    "language": re.compile(r"^Language:\s*(.+)$", re.MULTILINE),
}  # the release date and original publication: ``bookdates.header_values`` (one pass, no regex)
_EBOOK_NUMBER = re.compile(r"\[e-?book #(\d+)\]", re.IGNORECASE)
_HEADING = re.compile(r"^#{1,6}\s+\S")

Warn = Callable[[str, str], None]


class Skipped(Exception):
    """A file that is not a book we can read; counted under ``reason`` and reported, never fatal."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@attrs.define
class BooksScan:
    """What one ``ingest books`` run found: the records and the files it skipped, by reason."""

    records: list[Record] = attrs.field(factory=list)
    skipped: dict[str, int] = attrs.field(factory=dict)
    names_not_utf8: int = 0  # books read whose file or folder name is not UTF-8 (ids percent-encode it)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def extra(self) -> dict[str, Any]:
        """What the ingest report adds besides records and skips."""
        return {"namesNotUtf8": self.names_not_utf8}


def split_gutenberg(text: str) -> tuple[str, int, dict[str, Any] | None]:
    """Cut a Project Gutenberg header and licence footer off ``text``.

    Returns the body, the line number the body starts on, and the metadata (None: not Gutenberg).
    """
    start = _START.search(text)
    end_match = _END.search(text, start.end() if start else 0)
    if end_match is None:
        olds = list(_END_OLD.finditer(text, start.end() if start else 0))
        end_match = olds[-1] if olds else None
    if start is None and end_match is None:
        return text, 1, None
    body_start = 0
    header = ""
    if start is not None:
        body_start = start.end() + 1 if start.end() < len(text) else start.end()
        header = text[:body_start]
    footer_at = len(text)
    if end_match is not None:
        footer_at = end_match.start()
        # "End of the Project Gutenberg EBook of ..." a few lines above "*** END" belongs to it too.
        window_start = max(body_start, text.rfind("\n", 0, max(0, footer_at - 1500)))
        old = [m for m in _END_OLD.finditer(text, window_start, footer_at)]
        if old:
            footer_at = old[0].start()
    body = text[body_start:footer_at]
    footer = text[footer_at:]
    meta: dict[str, Any] = {"header": header, "footer": footer}
    for key, pattern in _HEADER_FIELDS.items():
        found = pattern.search(header)
        if found:
            meta[key] = found.group(1).strip()
    from episteme_core.personal.bookdates import header_values

    meta.update(header_values(header))
    number = _EBOOK_NUMBER.search(header)
    if number:
        meta["ebook"] = int(number.group(1))
    first_line = text.count("\n", 0, body_start) + 1
    return body, first_line, meta


def read_book(
    path: Path,
    corpus: str,
    book: str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_paragraphs: int = DEFAULT_MAX_PARAGRAPHS,
    relative: str | None = None,
    beneath: Path | None = None,
) -> Record:
    """One book file as the record ``book:<corpus>/<book>`` (both already id-safe); a file that is
    not a readable book (larger than ``max_bytes``, more paragraphs than ``max_paragraphs``) raises
    ``Skipped``. ``relative`` is its path in the corpus, for metadata; ``beneath``, the corpus folder
    (no folder between it and the book, or its sidecar, is followed if it becomes a symbolic link)."""
    shown = fs_text(path)
    try:  # opened once, checked on the descriptor, read no further than the size checked
        data, _info = read_checked(path, max_bytes, beneath=beneath)
    except Refused as refused:
        raise Skipped(refused.reason, refused.message) from None
    if looks_binary(data):
        raise Skipped("binary", f"{shown}: binary content (NUL bytes), skipped")
    decoded, encoding = decode_text(data)
    text = normalise_newlines(decoded)
    markdown = path.suffix.lower() in MARKDOWN_SUFFIXES
    metadata: dict[str, Any] = {
        "corpus": corpus,
        "path": fs_text(relative if relative is not None else book + path.suffix),
        "format": "markdown" if markdown else "text",
        "encoding": encoding,
        "bytes": len(data),
        "sha256": sha256_hex(data),
        "crlf": "\r\n" in decoded,
    }
    front, body, consumed, raw_front = parse_front_matter(text, strict=not markdown)
    first_line = consumed + 1
    if consumed:
        metadata["frontMatter"] = front
        metadata["frontMatterText"] = raw_front
    gutenberg_body, body_line, gutenberg = split_gutenberg(body)
    if gutenberg is not None:
        metadata["gutenberg"] = gutenberg
        body = gutenberg_body
        first_line += body_line - 1
    dated = book_date(path, front, gutenberg, metadata, beneath=beneath)
    time = dated.time if dated is not None else None
    if dated is not None:
        metadata.update(dated.metadata())
    starts, ends, lines = paragraph_spans(body, first_line=first_line, markdown=markdown)
    if not starts:
        raise Skipped("empty", f"{shown}: no paragraphs, skipped")
    if len(starts) > max_paragraphs:
        raise Skipped("tooManyParagraphs", f"{shown}: more than {max_paragraphs} paragraphs, skipped")
    texts = TextSpans(body, starts, ends)  # a paragraph's text is sliced from the body when read
    kinds = frontmatter.kinds(texts)  # contents, captions: marked kinds
    if markdown:
        for index, piece in enumerate(texts):
            if "\n" not in piece and _HEADING.match(piece):
                kinds[index] = "heading"
    paragraphs = SpanParagraphs(texts, lines, kinds, time)
    title = _title(front, gutenberg, paragraphs, markdown, book)
    # numbered 1..N by construction: ``build_record`` would copy them into a list of objects
    return Record(
        id=check_record_id(f"book:{corpus}/{book}"),
        source=SOURCE,
        time=time,
        paragraphs=paragraphs,
        title=title,
        metadata=metadata,
    )


SIDECAR_SUFFIX = ".meta.json"
SIDECAR_MAX_BYTES = 64 * 1024


def sidecar_of(path: Path) -> Path:
    """Where a book's sidecar lies: ``BOOK.meta.json`` beside ``BOOK.txt`` (or ``.md``)."""
    return path.with_name(path.stem + SIDECAR_SUFFIX)


def book_date(path: Path, front: dict[str, str], gutenberg: dict[str, Any] | None,
              metadata: dict[str, Any], *, beneath: Path | None = None) -> Any:
    """The time of a book's text, where something tells it: its sidecar's ``date``, else its front
    matter's, else its Project Gutenberg header's (original publication year, else release date);
    else None. Never the file's modification time (a clone or a copy sets it to the checkout's
    minute). A date that cannot be read is noted in ``metadata`` (``badDate``) and passed over."""
    from episteme_core.personal.bookdates import BookDate, as_time, gutenberg_date, parse_date, sidecar_date

    side = _read_sidecar(sidecar_of(path), metadata, beneath)
    if side is not None:
        found = sidecar_date(side)
        if found is not None:
            return found
        metadata["badDate"] = str(side)[:200]
    if front.get("date"):
        exact = parse_time(front["date"])
        if exact is not None:
            return BookDate(exact, "day" if len(front["date"].strip().strip("'\"")) == 10 else "time",
                            "frontMatter")
        parts = parse_date(front["date"])
        if parts is not None:
            return BookDate(*as_time(parts), "frontMatter")
        metadata["badDate"] = front["date"][:200]
    if gutenberg is not None:
        return gutenberg_date(str(gutenberg.get("header") or ""))
    return None


def _read_sidecar(path: Path, metadata: dict[str, Any], beneath: Path | None = None) -> Any:
    """The ``date`` of a book's sidecar when there is one (None when absent or unreadable: noted)."""
    from episteme_core.records.canonical import loads_strict

    try:
        data, _info = read_checked(path, SIDECAR_MAX_BYTES, beneath=beneath)
    except Refused as refused:
        if refused.reason != "missing":
            metadata["badSidecar"] = "not a regular file of at most 64 KiB"
        return None
    try:
        value = loads_strict(data, source=str(path))
    except EpistemeError as exc:
        metadata["badSidecar"] = getattr(exc, "message", None) or str(exc)
        return None
    if not isinstance(value, dict) or "date" not in value:
        metadata["badSidecar"] = 'not a JSON object with a "date"'
        return None
    metadata["sidecar"] = path.name
    return value["date"]


def _title(
    front: dict[str, str],
    gutenberg: dict[str, Any] | None,
    paragraphs: Sequence[Paragraph],
    markdown: bool,
    book: str,
) -> str:
    if front.get("title"):
        return front["title"]
    if gutenberg and gutenberg.get("title"):
        return str(gutenberg["title"])
    if markdown:
        for paragraph in paragraphs:
            if paragraph.kind == "heading":
                return paragraph.text.lstrip("#").strip()
    from urllib.parse import unquote

    return unquote(book.rsplit("/", 1)[-1])


def corpus_name(directory: Path) -> str:
    """The corpus segment of the ids: the folder's own name."""
    return directory.absolute().resolve().name if directory.name in ("", ".", "..") else directory.name


def scan_books(
    directories: list[Path],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_paragraphs: int = DEFAULT_MAX_PARAGRAPHS,
    warn: Warn | None = None,
) -> BooksScan:
    """Every book under ``directories`` (sorted, hidden entries and symlinks skipped), all at once."""
    scan = BooksScan()
    scan.records.extend(
        iter_books(directories, scan, max_bytes=max_bytes, max_paragraphs=max_paragraphs, warn=warn)
    )
    return scan


def iter_books(
    directories: list[Path],
    scan: BooksScan,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_paragraphs: int = DEFAULT_MAX_PARAGRAPHS,
    warn: Warn | None = None,
) -> Iterator[Record]:
    """Each book under ``directories`` as it is read, its skips counted in ``scan``: an ingest stores
    one book and lets it go before reading the next (memory follows the largest book, not the run)."""
    warn = warn or (lambda code, message: None)
    seen: set[str] = set()
    for directory in directories:
        shown = fs_text(directory)
        if not directory.is_dir():
            raise EpistemeError(
                "INVALID_INPUT", f"{shown}: not a folder of books", details={"path": shown}
            )
        corpus = fs_segment(corpus_name(directory)) or ""
        if not corpus:
            raise EpistemeError(
                "INVALID_INPUT", f"{shown}: the folder name cannot be part of a record id",
                details={"path": shown},
            )
        for path in _walk(directory, scan, warn):
            relative = path.relative_to(directory).as_posix()
            where = fs_text(path)
            segments = [fs_segment(part) for part in path.relative_to(directory).with_suffix("").parts]
            if not all(segments):
                scan.skip("badName")
                warn("BOOK_SKIPPED", f"{where}: the name cannot be part of a record id, skipped")
                continue
            book = "/".join(s for s in segments if s)
            record_id = f"book:{corpus}/{book}"
            try:
                check_record_id(record_id)  # e.g. a file named ':.' makes a '.' segment
            except EpistemeError as refused:
                scan.skip("badName")
                warn("BOOK_SKIPPED", f"{where}: {refused.message}, skipped")
                continue
            if record_id in seen:
                scan.skip("duplicate")
                warn("BOOK_SKIPPED", f"{where}: {record_id} was already read from another file, skipped")
                continue
            try:
                record = read_book(path, corpus, book, max_bytes=max_bytes, max_paragraphs=max_paragraphs,
                                   relative=relative, beneath=directory)
            except Skipped as skipped:
                scan.skip(skipped.reason)
                warn("BOOK_SKIPPED", skipped.message)
                continue
            except OSError as exc:
                scan.skip("unreadable")
                warn("BOOK_SKIPPED", f"{where}: cannot read: {exc.strerror or exc}")
                continue
            seen.add(record_id)
            if not name_is_utf8(str(path)):
                scan.names_not_utf8 += 1
                warn("BOOK_NAME_NOT_UTF8", f"{where}: the file name is not UTF-8; read as {record_id} "
                     "(bytes that are not UTF-8 are written %XX in the id)")
            if "badDate" in record.metadata:
                warn("BAD_DATE", f"{where}: the date {record.metadata['badDate']!r} is not a date; the "
                     "book has no time (never the file's modification time)")
            if "badSidecar" in record.metadata:
                warn("BAD_SIDECAR", f"{where}: its {SIDECAR_SUFFIX} sidecar is not read: "
                     f"{record.metadata['badSidecar']}")
            yield record


def _walk(directory: Path, scan: BooksScan, warn: Warn) -> list[Path]:
    found: list[Path] = []
    for root, dirs, files in os.walk(directory, followlinks=False):
        kept = []
        for name in sorted(dirs):
            if name.startswith("."):
                continue
            if os.path.islink(os.path.join(root, name)):
                scan.skip("symlink")
                warn("BOOK_SKIPPED", f"{fs_text(os.path.join(root, name))}: a symbolic link, skipped")
                continue
            kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = Path(root) / name
            if name.lower().endswith(SIDECAR_SUFFIX):
                continue  # a book's sidecar, read with its book
            if path.suffix.lower() not in TEXT_SUFFIXES + MARKDOWN_SUFFIXES:
                scan.skip("notText")
                continue
            if path.is_symlink():
                scan.skip("symlink")
                warn("BOOK_SKIPPED", f"{fs_text(path)}: a symbolic link, skipped")
                continue
            found.append(path)
    return sorted(found)
