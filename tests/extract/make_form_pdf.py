"""Writes ``tests/fixtures/extract/ruled-form.pdf``: a one-page form whose ruled grid leaves a corner
without cells, where a block of instructions sits (inside the grid's box, in no cell). pdfplumber's
plain text reads those lines; an extractor that trusts the grid's box drops them.

    python tests/extract/make_form_pdf.py   (the fixture is committed; this says how it was made)
"""

from __future__ import annotations

from pathlib import Path

try:
    from .pdf_build import build_pdf, text_ops
except ImportError:  # run as a script
    from pdf_build import build_pdf, text_ops  # type: ignore[import-not-found,no-redef]

TARGET = Path(__file__).resolve().parent.parent / "fixtures" / "extract" / "ruled-form.pdf"


def _line(x0: float, y0: float, x1: float, y1: float) -> bytes:
    return f"{x0} {842 - y0} m {x1} {842 - y1} l S".encode()


def form() -> bytes:
    rules = [b"0.8 w", _line(50, 100, 545, 100), _line(50, 150, 545, 150), _line(50, 200, 300, 200),
             _line(50, 100, 50, 200), _line(300, 100, 300, 200), _line(545, 100, 545, 150)]
    text = text_ops([
        (50, 60, "F2", 14, "Permit renewal form"),
        (60, 130, "F2", 10, "Applicant name"), (310, 130, "F1", 10, "Jane Example"),
        (60, 180, "F2", 10, "Reference number"),
        (310, 165, "F1", 9, "Return this form by 30 June"),
        (310, 177, "F1", 9, "to the licensing office, room 4,"),
        (310, 189, "F1", 9, "with a copy of your permit."),
        (50, 240, "F1", 10, "Sign below to confirm the details above are correct."),
    ])
    return build_pdf([b"\n".join(rules) + b"\n" + text])


if __name__ == "__main__":
    TARGET.write_bytes(form())
