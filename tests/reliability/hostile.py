"""Hostile inputs, made on the fly: each is small on disk or within the byte limits, and costly to read.

Used by the memory-bound tests, ``bench/memory.py`` and the reliability report. Every generator
writes into a folder and returns the file; nothing here reads outside the test's own folders.
"""

from __future__ import annotations

import zlib
from pathlib import Path

MIB = 1024 * 1024


def html_tiny_paragraphs(folder: Path, count: int = 1_000_000) -> Path:
    """About 8 MB of ``<p>a</p>``: a million one-letter paragraphs in one page."""
    path = folder / "tiny-paragraphs.html"
    with open(path, "wb") as out:
        out.write(b"<!doctype html><html><head><title>t</title></head><body>\n")
        row = b"<p>a</p>" * 1000 + b"\n"
        for _ in range(count // 1000):
            out.write(row)
        out.write(b"</body></html>\n")
    return path


def text_one_letter_paragraphs(folder: Path, count: int = 2_000_000) -> Path:
    """About 6 MB of ``a`` paragraphs separated by blank lines (plain text)."""
    path = folder / "one-letter.txt"
    with open(path, "wb") as out:
        row = b"a\n\n" * 1000
        for _ in range(count // 1000):
            out.write(row)
    return path


def text_most_chunks(folder: Path, count: int = 99_000, chars: int = 320) -> Path:
    """About 32 MB of distinct ``chars``-character paragraphs: as many chunks as one document's
    bounds allow (just under 100,000 blocks and 32,000,000 characters), each word rare."""
    path = folder / "most-chunks.txt"
    with open(path, "w", encoding="ascii") as out:
        for n in range(count):
            words = " ".join(f"w{n}x{k}" for k in range(chars // 10))
            out.write(words[:chars - 1].ljust(chars - 1, "z") + ".\n\n")
    return path


def markdown_headings(folder: Path, count: int = 1_000_000) -> Path:
    """About 4 MB of one-letter Markdown headings: a section per line."""
    path = folder / "headings.md"
    with open(path, "wb") as out:
        row = b"# a\n\n" * 1000
        for _ in range(count // 1000):
            out.write(row)
    return path


def html_one_huge_paragraph(folder: Path, mib: int = 24) -> Path:
    """One ``<p>`` of ``mib`` MiB of words: a single block as large as the byte bound allows."""
    path = folder / "huge-paragraph.html"
    with open(path, "wb") as out:
        out.write(b"<!doctype html><html><body><p>")
        row = b"word " * (MIB // 5)
        for _ in range(mib):
            out.write(row)
        out.write(b"</p></body></html>\n")
    return path


def deflate_bomb(inflated_mib: int, fill: bytes = b" ") -> bytes:
    """zlib data that inflates to ``inflated_mib`` MiB of ``fill`` (about 1/1000 of that on disk)."""
    packer = zlib.compressobj(9)
    block = fill * (MIB // len(fill))
    parts = [packer.compress(block) for _ in range(inflated_mib)]
    parts.append(packer.flush())
    return b"".join(parts)


def pdf_with_stream(stream: bytes, filters: str = "/FlateDecode") -> bytes:
    """A one-page PDF whose page content is ``stream`` behind ``filters`` (xref offsets exact)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter %s >>\nstream\n" % (len(stream), filters.encode()) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def pdf_flate_bomb(folder: Path, inflated_mib: int = 600) -> Path:
    """A PDF of about 0.6 MB whose one content stream inflates to ``inflated_mib`` MiB."""
    path = folder / "flate-bomb.pdf"
    path.write_bytes(pdf_with_stream(deflate_bomb(inflated_mib)))
    return path


def html_deep_sections(folder: Path, depth: int = 60, heading_chars: int = 1000, mib: int = 20) -> Path:
    """Sections nested ``depth`` deep, each heading ``heading_chars`` long, then paragraphs: every
    block would repeat the whole path of headings."""
    path = folder / "deep-sections.html"
    heading = ("h" * (heading_chars - 1) + " ").encode()
    with open(path, "wb") as out:
        out.write(b"<!doctype html><html><body>")
        for level in range(depth):
            out.write(b"<section><h2>%d %s</h2>" % (level, heading))
        row = b"<p>" + b"word " * 40 + b"</p>\n"
        for _ in range(mib * MIB // len(row)):
            out.write(row)
        out.write(b"</section>" * depth + b"</body></html>\n")
    return path


def xml_tiny_elements(folder: Path, count: int = 1_000_000) -> Path:
    """About 8 MB of XML: a million ``<a>b</a>`` under one root."""
    path = folder / "tiny-elements.xml"
    with open(path, "wb") as out:
        out.write(b"<?xml version='1.0'?><r>")
        row = b"<a>b</a>" * 1000
        for _ in range(count // 1000):
            out.write(row)
        out.write(b"</r>\n")
    return path


def pdf_runlength_bomb(folder: Path, runs: int = 500_000) -> Path:
    """A PDF whose content stream is RunLength data of ``runs`` runs of 128 spaces (64x growth)."""
    path = folder / "runlength-bomb.pdf"
    path.write_bytes(pdf_with_stream(b"\x81 " * runs + b"\x80", "/RunLengthDecode"))
    return path


def pdf_many_glyphs(folder: Path, glyphs: int = 95_000) -> Path:
    """A one-page PDF drawing ``glyphs`` characters in one tiny font (many layout objects)."""
    path = folder / "many-glyphs.pdf"
    lines = []
    per_line = 1000
    for row in range(glyphs // per_line):
        lines.append(b"BT /F1 1 Tf 10 %d Td (%s) Tj ET" % (800 - row * 2 % 780, b"a" * per_line))
    path.write_bytes(pdf_with_stream(zlib.compress(b"\n".join(lines), 9)))
    return path


def pdf_pages(pages: int, lines: int = 60) -> bytes:
    """An honest PDF of ``pages`` pages of ``lines`` lines of words each: slow to lay out, not hostile."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"]
    kids = []
    for page in range(pages):
        ops = b"\n".join(
            b"BT /F1 9 Tf 40 %d Td (page %d line %d: the quick brown fox jumps over the lazy dog) Tj ET"
            % (800 - line * 12, page, line) for line in range(lines))
        objects.append(b"<< /Length %d >>\nstream\n" % len(ops) + ops + b"\nendstream")
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents %d 0 R "
                       b"/Resources << /Font << /F1 3 0 R >> >> >>" % len(objects))
        kids.append(len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)
