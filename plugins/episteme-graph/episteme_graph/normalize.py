"""``graph normalize``: local text files into segments, each with selectors a graph can cite.

Accepted by suffix: txt, md/markdown (paragraphs), html/htm (text blocks), csv (rows), json (leaves).
Everything else is rejected by name before it is read further: URLs, PDFs, images, media, archives,
office files (those with macros named as such), NUL-holding or invalid UTF-8 text, symlinks, and
paths outside the root. Offsets index the text decoded as UTF-8 (a leading BOM dropped), exactly as
``graph verify`` reads a recorded file.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import stat
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import attrs

ADAPTER_VERSION = "1"
CONTEXT = 32
ACCEPTED = {
    ".txt": "txt",
    ".md": "md",
    ".markdown": "md",
    ".html": "html",
    ".htm": "html",
    ".csv": "csv",
    ".json": "json",
}
MEDIA = {
    "txt": "text/plain",
    "md": "text/markdown",
    "html": "text/html",
    "csv": "text/csv",
    "json": "application/json",
}
REJECTED_SUFFIXES = {
    "pdf": (".pdf",),
    "image": (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff", ".svg", ".ico", ".heic"),
    "media": (".mp3", ".wav", ".ogg", ".flac", ".m4a", ".mp4", ".mov", ".avi", ".mkv", ".webm"),
    "archive": (".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".zst", ".jar"),
    "office-macros": (".docm", ".xlsm", ".pptm", ".dotm", ".xltm", ".potm", ".ppsm"),
    "office": (".docx", ".xlsx", ".pptx", ".doc", ".xls", ".ppt", ".odt", ".ods", ".odp", ".rtf"),
}
REASONS = {
    "url": "a URL: capture it with 'episteme snapshot' and cite the snapshot",
    "pdf": "a PDF: extract its text with 'episteme extract' (or a trusted PDF text extractor) first",
    "image": "an image: no OCR here",
    "media": "audio or video",
    "archive": "an archive: unpack it and give the files",
    "office-macros": "an office file with macros: never opened",
    "office": "an office file: save it as text, Markdown or CSV first",
    "unsupported": "not a .txt, .md, .html, .csv or .json file",
    "symlink": "a symlink in the path: give the real path",
    "outside-root": "outside the root folder",
    "not-a-file": "not a regular file",
    "missing": "no such file",
    "binary": "holds a NUL byte: binary, not text",
    "encoding": "not valid UTF-8",
    "too-large": "larger than --max-bytes",
    "malformed": "malformed",
}
BLOCK_TAGS = frozenset(
    {
        "title",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "p",
        "li",
        "dt",
        "dd",
        "blockquote",
        "pre",
        "td",
        "th",
        "caption",
    }
)
SKIPPED_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "canvas"})
VOID_TAGS = frozenset(
    {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    }
)
MAX_HTML_DEPTH, MAX_JSON_DEPTH = 512, 256
_PARAGRAPH = re.compile(r"[^\r\n]*\S[^\r\n]*(?:(?:\r\n|\r|\n)[^\r\n]*\S[^\r\n]*)*")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+:")


@attrs.frozen
class Limits:
    max_bytes: int = 64 * 1024 * 1024
    max_segments: int = 10_000
    max_segment_chars: int = 16_000


class Rejected(Exception):
    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


def classify(path: Path) -> str:
    """The kind of a path by its suffix, or the reason it is refused."""
    suffix = path.suffix.lower()
    if suffix in ACCEPTED:
        return ACCEPTED[suffix]
    for reason, suffixes in REJECTED_SUFFIXES.items():
        if suffix in suffixes:
            raise Rejected(reason)
    raise Rejected("unsupported")


def check_path(given: Path, root: Path) -> Path:
    """The absolute path of ``given`` inside ``root``, with no symlink on the way."""
    if _SCHEME.match(str(given)):
        raise Rejected("url")
    absolute = Path(os.path.normpath(root / given if not given.is_absolute() else given))
    try:
        relative = absolute.relative_to(root)
    except ValueError:
        raise Rejected("outside-root") from None
    current = root
    for part in relative.parts:
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            raise Rejected("missing") from None
        if stat.S_ISLNK(info.st_mode):
            raise Rejected("symlink")
    if not stat.S_ISREG(os.lstat(absolute).st_mode):
        raise Rejected("not-a-file")
    return absolute


def read_text(path: Path, max_bytes: int) -> tuple[bytes, str]:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise Rejected("too-large")
    if data.startswith(b"%PDF-"):
        raise Rejected("pdf")
    if b"\x00" in data:
        raise Rejected("binary")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Rejected("encoding", f"at byte {exc.start}") from None
    return data, text[1:] if text.startswith("\ufeff") else text


def _quote(text: str, start: int, end: int) -> dict[str, Any]:
    selector = {"type": "TextQuoteSelector", "exact": text[start:end]}
    if start:
        selector["prefix"] = text[max(0, start - CONTEXT) : start]
    if end < len(text):
        selector["suffix"] = text[end : end + CONTEXT]
    return selector


def _split(start: int, end: int, text: str, limit: int) -> list[tuple[int, int]]:
    """``[start, end)`` cut into pieces of at most ``limit`` characters, at a line break or space in
    the second half of each piece when there is one."""
    pieces = []
    while end - start > limit:
        window = text[start + limit // 2 : start + limit]
        cut = max(window.rfind("\n"), window.rfind(" "), window.rfind("\t"))
        at = start + limit // 2 + cut + 1 if cut >= 0 else start + limit
        pieces.append((start, at))
        start = at
    pieces.append((start, end))
    return pieces


def text_segments(text: str, limits: Limits) -> list[tuple[list[dict[str, Any]], str]]:
    out = []
    for match in _PARAGRAPH.finditer(text):
        raw_start, raw_end = match.span()
        start = raw_start + len(match.group()) - len(match.group().lstrip())
        end = raw_end - (len(match.group()) - len(match.group().rstrip()))
        for a, b in _split(start, end, text, limits.max_segment_chars):
            piece = text[a:b]
            lead = len(piece) - len(piece.lstrip())
            trail = len(piece) - len(piece.rstrip())
            a, b = a + lead, b - trail
            if a < b:
                out.append(
                    ([{"type": "TextPositionSelector", "start": a, "end": b}, _quote(text, a, b)], text[a:b])
                )
    return out


class _Blocks(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, str | None]] = []
        self.skip = 0
        self.open_blocks: list[tuple[str, str | None, list[str]]] = []
        self.blocks: list[tuple[str | None, str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID_TAGS:
            return
        ident = next((v for k, v in attrs if k == "id" and v), None)
        self.stack.append((tag, ident))
        if len(self.stack) > MAX_HTML_DEPTH:
            raise Rejected("malformed", f"HTML nesting deeper than {MAX_HTML_DEPTH}")
        if tag in SKIPPED_TAGS:
            self.skip += 1
        elif tag in BLOCK_TAGS and not self.skip:
            nearest = ident or next((i for _, i in reversed(self.stack) if i), None)
            self.open_blocks.append((tag, nearest, []))

    def handle_endtag(self, tag: str) -> None:
        if not any(t == tag for t, _ in self.stack):
            return
        while self.stack:
            open_tag, _ = self.stack.pop()
            if open_tag in SKIPPED_TAGS:
                self.skip -= 1
            elif open_tag in BLOCK_TAGS and self.open_blocks and self.open_blocks[-1][0] == open_tag:
                block_tag, ident, parts = self.open_blocks.pop()
                self.blocks.append((ident, "".join(parts), block_tag == "pre"))
            if open_tag == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self.skip and self.open_blocks:
            self.open_blocks[-1][2].append(data)


def html_segments(text: str, limits: Limits) -> list[tuple[list[dict[str, Any]], str]]:
    parser = _Blocks()
    parser.feed(text)
    parser.close()
    while parser.open_blocks:
        tag, ident, parts = parser.open_blocks.pop()
        parser.blocks.append((ident, "".join(parts), tag == "pre"))
    out = []
    for ident, raw, keep in parser.blocks:
        body = raw.strip("\n") if keep else " ".join(raw.split())
        if not body.strip():
            continue
        for a, b in _split(0, len(body), body, limits.max_segment_chars):
            selectors: list[dict[str, Any]] = []
            if ident:
                selectors.append({"type": "FragmentSelector", "fragment": f"#{ident}"})
            selectors.append({"type": "TextQuoteSelector", "exact": body[a:b]})
            out.append((selectors, body[a:b]))
    return out


def _column_name(index: int) -> str:
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(65 + rest) + name
    return name


def csv_segments(text: str, limits: Limits) -> list[tuple[list[dict[str, Any]], str]]:
    out = []
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    except csv.Error as exc:
        raise Rejected("malformed", f"CSV: {exc}") from None
    for r, row in enumerate(rows, 1):
        if not any(cell.strip() for cell in row):
            continue
        body = "\t".join(row)
        if len(body) > limits.max_segment_chars:
            raise Rejected("too-large", f"row {r} is longer than {limits.max_segment_chars} characters")
        out.append(
            (
                [
                    {
                        "type": "CsvSelector",
                        "sheet": "data",
                        "cell_range": f"A{r}:{_column_name(len(row) - 1)}{r}",
                    }
                ],
                body,
            )
        )
    return out


def json_segments(text: str, limits: Limits) -> list[tuple[list[dict[str, Any]], str]]:
    from episteme_core.api import EpistemeError, loads_strict

    try:
        value = loads_strict(text, source="json", max_depth=MAX_JSON_DEPTH)
    except EpistemeError as exc:
        raise Rejected("malformed", exc.message.removeprefix("json: ")) from None
    except ValueError as exc:
        raise Rejected("malformed", str(exc)) from None
    out = []
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        pointer, item = stack.pop()
        if isinstance(item, dict) and item:
            stack.extend(
                (f"{pointer}/{k.replace('~', '~0').replace('/', '~1')}", v)
                for k, v in sorted(item.items(), reverse=True)
            )
        elif isinstance(item, list) and item:
            stack.extend((f"{pointer}/{i}", v) for i, v in reversed(list(enumerate(item))))
        else:
            body = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, sort_keys=True)
            if body.strip():
                if len(body) > limits.max_segment_chars:
                    raise Rejected("too-large", f"{pointer or '/'} is longer than {limits.max_segment_chars}")
                out.append(([{"type": "JsonPointerSelector", "json_pointer": pointer}], body))
    return out


SEGMENTERS = {
    "txt": text_segments,
    "md": text_segments,
    "html": html_segments,
    "csv": csv_segments,
    "json": json_segments,
}


def normalize_file(path: Path, root: Path, limits: Limits) -> dict[str, Any]:
    """One file's source entry and segments; ``Rejected`` says why not."""
    if _SCHEME.match(str(path)):
        raise Rejected("url")
    kind = classify(path)
    absolute = check_path(path, root)
    data, text = read_text(absolute, limits.max_bytes)
    sha = hashlib.sha256(data).hexdigest()
    pieces = SEGMENTERS[kind](text, limits)
    if len(pieces) > limits.max_segments:
        raise Rejected("too-large", f"{len(pieces)} segments, more than --max-segments {limits.max_segments}")
    from episteme_core.api import canonical_text

    segments = []
    for index, (selectors, body) in enumerate(pieces):
        ident = hashlib.sha256(
            canonical_text({"source_sha256": sha, "selectors": selectors, "text": body}).encode()
        ).hexdigest()
        segments.append(
            {
                "id": f"seg-{ident[:24]}",
                "index": index,
                "selectors": selectors,
                "text": body,
                "textSha256": hashlib.sha256(body.encode("utf-8")).hexdigest(),
            }
        )
    return {
        "source": {
            "id": f"source-{sha[:24]}",
            "file": absolute.relative_to(root).as_posix(),
            "type": kind,
            "mediaType": MEDIA[kind],
            "contentSha256": sha,
            "sizeBytes": len(data),
        },
        "segmentCount": len(segments),
        "segments": segments,
    }


def normalize_paths(paths: list[Path], root: Path, limits: Limits | None = None) -> dict[str, Any]:
    """Every path normalized, or an error naming each rejected path and why (all or nothing)."""
    from episteme_core.api import EpistemeError

    limits = limits or Limits()
    root = root.resolve()
    results, rejected = [], []
    for path in paths:
        try:
            results.append(normalize_file(path, root, limits))
        except Rejected as refusal:
            detail = f" ({refusal.detail})" if refusal.detail else ""
            rejected.append(
                {
                    "path": str(path),
                    "reason": refusal.reason,
                    "message": f"{path}: {REASONS[refusal.reason]}{detail}",
                }
            )
        except OSError as exc:
            rejected.append(
                {
                    "path": str(path),
                    "reason": "not-a-file",
                    "message": f"{path}: cannot read ({exc.strerror})",
                }
            )
    if rejected:
        limit_only = all(r["reason"] == "too-large" for r in rejected)
        raise EpistemeError(
            "LIMIT_EXCEEDED" if limit_only else "INVALID_INPUT",
            f"{len(rejected)} path(s) rejected: " + "; ".join(r["message"] for r in rejected[:5]),
            details={"rejected": rejected},
        )
    return {
        "adapterVersion": ADAPTER_VERSION,
        "root": str(root),
        "sources": results,
        "contentTrust": "untrusted-source",
    }


def render_text(data: dict[str, Any]) -> str:
    from episteme_core.api import canonical_text

    lines = [
        f"# {len(data['sources'])} file(s), {sum(s['segmentCount'] for s in data['sources'])} segment(s)"
    ]
    lines += [canonical_text(source) for source in data["sources"]]
    return "\n".join(lines)
