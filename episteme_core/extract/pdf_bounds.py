"""Bound the work of one PDF page: a deadline and an object cap checked while pdfminer lays it out.

pdfplumber lays a page out lazily (``Page.layout``) with no way to stop; a page of many thousands of
tiny text objects can run for minutes. ``bounded_layout`` runs the same interpreter with a device
that counts every character, path and image it receives and checks the clock every 256 of them,
then hands the finished layout to the page, so everything pdfplumber computes later (chars, words,
tables) reads from it. Operators that draw nothing are not counted.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

DEFAULT_MAX_OBJECTS = 100_000  # a glyph costs about 2 KB laid out (pdfminer, then pdfplumber's dicts)


class PageTooComplex(Exception):
    """The page holds more drawing objects than the bound allows."""

    def __init__(self, count: int) -> None:
        super().__init__(f"more than {count} text or graphics objects on one page")
        self.count = count


class PageDeadline(Exception):
    """The time bound was reached while the page was laid out."""


@lru_cache(maxsize=1)
def _device_class() -> type:
    """pdfplumber's aggregator with a counter (built once, on first use: pdfplumber loads lazily)."""
    from pdfplumber.page import PDFPageAggregatorWithMarkedContent

    class BoundedAggregator(PDFPageAggregatorWithMarkedContent):  # type: ignore[misc]
        deadline: float = float("inf")
        max_objects: int = DEFAULT_MAX_OBJECTS
        count: int = 0

        def _tick(self) -> None:
            self.count += 1
            if self.count > self.max_objects:
                raise PageTooComplex(self.max_objects)
            if not self.count & 255 and time.monotonic() > self.deadline:
                raise PageDeadline()

        def render_char(self, *args: Any, **kwargs: Any) -> float:
            self._tick()
            return float(super().render_char(*args, **kwargs))

        def paint_path(self, *args: Any, **kwargs: Any) -> None:
            self._tick()
            super().paint_path(*args, **kwargs)

        def render_image(self, *args: Any, **kwargs: Any) -> None:
            self._tick()
            super().render_image(*args, **kwargs)

    return BoundedAggregator


def bounded_layout(page: Any, deadline: float, max_objects: int) -> None:
    """Lay ``page`` out as ``page.layout`` would, raising ``PageDeadline`` past ``deadline``
    (``time.monotonic``) or ``PageTooComplex`` past ``max_objects`` drawing objects."""
    from pdfminer.pdfinterp import PDFPageInterpreter

    if time.monotonic() > deadline:
        raise PageDeadline()
    device = _device_class()(page.pdf.rsrcmgr, pageno=page.page_number, laparams=page.pdf.laparams)
    device.deadline = deadline
    device.max_objects = max_objects
    interpreter = PDFPageInterpreter(page.pdf.rsrcmgr, device)
    interpreter.process_page(page.page_obj)
    page._layout = device.get_result()  # what pdfplumber's lazy ``layout`` property returns
