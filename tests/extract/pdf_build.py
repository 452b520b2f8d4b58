"""Write small PDFs for tests by hand: standard Type 1 fonts, one content stream per page."""

from __future__ import annotations

FONTS = {"F1": "Helvetica", "F2": "Helvetica-Bold", "F3": "Helvetica-Oblique"}


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def text_ops(runs: list[tuple[float, float, str, float, str]]) -> bytes:
    """Content-stream operators drawing ``(x, y from the top, font, size, text)`` runs on an A4 page."""
    ops = []
    for x, y, font, size, text in runs:
        ops.append(f"BT /{font} {size} Tf {x:.2f} {842 - y:.2f} Td ({_escape(text)}) Tj ET")
    return "\n".join(ops).encode("latin-1")


def build_pdf(pages: list[bytes]) -> bytes:
    """A valid PDF (with xref) whose pages draw the given content streams."""
    objects: list[bytes] = []
    font_ids = {}
    for name, base in FONTS.items():
        objects.append(f"<< /Type /Font /Subtype /Type1 /BaseFont /{base} "
                       "/Encoding /WinAnsiEncoding >>".encode())
        font_ids[name] = len(objects)
    fonts = " ".join(f"/{n} {i} 0 R" for n, i in font_ids.items())
    pages_id = len(objects) + 1
    objects.append(b"")  # the Pages node, filled in below
    kids = []
    for content in pages:
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
        stream_id = len(objects)
        objects.append(f"<< /Type /Page /Parent {pages_id} 0 R /MediaBox [0 0 595 842] "
                       f"/Resources << /Font << {fonts} >> >> /Contents {stream_id} 0 R >>".encode())
        kids.append(len(objects))
    objects[pages_id - 1] = (f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] "
                             f"/Count {len(kids)} >>").encode()
    objects.append(f"<< /Type /Catalog /Pages {pages_id} 0 R >>".encode())
    catalog = len(objects)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\n" % (len(objects) + 1, catalog)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def spaced_ops(runs: list[tuple[float, float, str, float, str, float]]) -> bytes:
    """Operators drawing ``(x, y from the top, font, size, text, gap)`` runs whose words are set
    ``gap`` ems apart with no space character between them (one ``TJ`` array), as some report
    generators set small type: pdfplumber's fixed tolerance reads such a run as one word."""
    ops = []
    for x, y, font, size, text, gap in runs:
        parts = f" {-round(gap * 1000)} ".join(f"({_escape(word)})" for word in text.split())
        ops.append(f"BT /{font} {size} Tf {x:.2f} {842 - y:.2f} Td [{parts}] TJ ET")
    return "\n".join(ops).encode("latin-1")


def rules(lines: list[tuple[float, float, float, float]]) -> bytes:
    """Operators stroking ``(x0, y0, x1, y1)`` lines (y from the top) on an A4 page."""
    return "\n".join(["0.5 w", *(f"{x0} {842 - y0} m {x1} {842 - y1} l S"
                                 for x0, y0, x1, y1 in lines)]).encode()
