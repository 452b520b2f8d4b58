"""Guards around pdfminer: stream data bounded before it is inflated, and cancellation kept.

**Streams.** pdfminer decodes a stream's filters in one go (``zlib.decompress``, a Python LZW and
RunLength decoder that build the whole output), so 0.6 MB of Flate data can become gigabytes.
``bounded_streams`` replaces, for the duration of one extraction, the decoders pdfminer's
``PDFStream.decode`` calls with ones that produce their output piece by piece and stop with
``StreamTooLarge`` as soon as one stream passes ``max_stream_bytes`` or all streams together pass
``max_total_bytes`` (pdfminer keeps every decoded stream of a document). The deadline of the
extraction is checked between pieces, so a slow decode cannot outlive it.

**Cancellation.** The extractor reads damaged files with broad ``except Exception`` clauses: a
SIGTERM (which becomes ``Cancelled``, an exception) landing inside pdfminer must end the run, not
become a diagnostic. ``reraise_cancellation`` is called first in each such clause.
"""

from __future__ import annotations

import contextlib
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from episteme_core.errors import Cancelled, cancel_requested
from episteme_core.records.inputs import MIB

DEFAULT_MAX_STREAM_BYTES = 32 * MIB
DEFAULT_MAX_TOTAL_BYTES = 192 * MIB
_PIECE = 1 << 20


class StreamTooLarge(Exception):
    """A stream (or all streams together) decoded past the bound; nothing past it was produced."""

    def __init__(self, message: str, *, total: bool) -> None:
        super().__init__(message)
        self.total = total  # the document's budget is spent: later pages cannot be read either


class StreamDeadline(Exception):
    """The extraction's time bound passed while a stream was decoded."""


class _Budget:
    """What one extraction may still decode; charged as output is produced."""

    def __init__(self, max_stream: int, max_total: int, deadline: float) -> None:
        self.max_stream = max_stream
        self.max_total = max_total
        self.deadline = deadline
        self.total = 0

    def charge(self, produced: int, so_far: int) -> None:
        """Account ``produced`` more bytes of a stream that now holds ``so_far``."""
        self.total += produced
        if so_far > self.max_stream:
            raise StreamTooLarge(f"a stream decodes to more than {self.max_stream} bytes", total=False)
        if self.total > self.max_total:
            raise StreamTooLarge(f"the streams decode to more than {self.max_total} bytes in all",
                                 total=True)
        if time.monotonic() > self.deadline:
            raise StreamDeadline()


def _inflate(data: bytes, budget: _Budget, *, strict: bool, retry: bool = True) -> bytes:
    """Inflate zlib ``data`` piece by piece within the budget.

    ``strict`` behaves as ``zlib.decompress`` (an incomplete stream is ``zlib.error``); otherwise
    as pdfminer's ``decompress_corrupted``: damage in the last bytes (the checksum) loses nothing
    and is logged as data loss, damage before them is ``zlib.error``.
    """
    inflater = zlib.decompressobj()
    parts: list[bytes] = []
    size = 0
    pending = data
    try:
        while pending and not inflater.eof:
            piece = inflater.decompress(pending, _PIECE)
            size += len(piece)
            budget.charge(len(piece), size)
            parts.append(piece)
            pending = inflater.unconsumed_tail
    except zlib.error:
        budget.total -= size
        if strict or not retry or len(data) <= 4:
            raise
        kept = _inflate(data[:-4], budget, strict=False, retry=False)  # raises if damaged earlier
        import logging

        logging.getLogger("pdfminer.pdftypes").warning("Data-loss while decompressing corrupted data")
        return kept
    if strict and not inflater.eof:
        raise zlib.error("incomplete or truncated stream")
    return b"".join(parts)


class _Zlib:
    """The part of the ``zlib`` module ``pdfminer.pdftypes`` uses, with bounded inflation."""

    error = zlib.error

    def __init__(self, budget: _Budget) -> None:
        self.budget = budget

    def decompress(self, data: bytes) -> bytes:
        return _inflate(data, self.budget, strict=True)

    def decompressobj(self, *args: Any, **kwargs: Any) -> Any:
        return zlib.decompressobj(*args, **kwargs)


def _bounded_lzw(budget: _Budget) -> Callable[[bytes], bytes]:
    def lzwdecode(data: bytes) -> bytes:
        import io

        from pdfminer.lzw import LZWDecoder

        parts: list[bytes] = []
        size = 0
        for piece in LZWDecoder(io.BytesIO(data)).run():
            size += len(piece)
            budget.charge(len(piece), size)
            parts.append(piece)
        return b"".join(parts)

    return lzwdecode


def _bounded_rl(budget: _Budget) -> Callable[[bytes], bytes]:
    def rldecode(data: bytes) -> bytes:
        """RunLengthDecode (PDF 1.7, 7.4.5) into a bytearray, within the budget."""
        out = bytearray()
        at, end = 0, len(data)
        while at < end:
            length = data[at]
            at += 1
            if length == 128:
                break
            before = len(out)
            if length < 128:
                out += data[at:at + length + 1]
                at += length + 1
            elif at < end:
                out += data[at:at + 1] * (257 - length)
                at += 1
            budget.charge(len(out) - before, len(out))
        return bytes(out)

    return rldecode


def _checked(decode: Callable[..., bytes], budget: _Budget, most: Callable[[bytes], int],
             ) -> Callable[..., bytes]:
    """A decoder whose output is at most ``most(input)`` bytes: refused before it runs when that
    could pass the bound, and charged after."""
    def bounded(data: bytes, *args: Any) -> bytes:
        budget.charge(0, most(data))
        out = decode(data, *args)
        budget.charge(len(out), len(out))
        return out

    return bounded


def _most_ascii85(data: bytes) -> int:
    return data.count(b"z") * 4 + len(data) * 4 // 5 + 4  # "z" stands for four zero bytes


def _most_hex(data: bytes) -> int:
    return len(data) // 2 + 1


def _bounded_ccitt(decode: Callable[..., bytes], budget: _Budget) -> Callable[..., bytes]:
    def ccittfaxdecode(data: bytes, params: Any) -> bytes:
        try:
            columns = int(params.get("Columns", 1728))
            rows = int(params.get("Rows", 0))
        except (AttributeError, TypeError, ValueError):
            columns, rows = 1728, 0
        budget.charge(0, (columns + 7) // 8 * rows)  # a fax image never decodes past its size
        out = decode(data, params)
        budget.charge(len(out), len(out))
        return out

    return ccittfaxdecode


@contextlib.contextmanager
def bounded_streams(
    deadline: float,
    max_stream_bytes: int = DEFAULT_MAX_STREAM_BYTES,
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
) -> Iterator[None]:
    """Within the block, pdfminer decodes no stream past ``max_stream_bytes``, no more than
    ``max_total_bytes`` in all, and nothing past ``deadline`` (``time.monotonic``)."""
    from pdfminer import pdftypes

    budget = _Budget(max_stream_bytes, max_total_bytes, deadline)
    names = ("zlib", "lzwdecode", "rldecode", "ascii85decode", "asciihexdecode", "ccittfaxdecode",
             "decompress_corrupted")
    saved = {name: getattr(pdftypes, name) for name in names}
    replacements: dict[str, Any] = {
        "zlib": _Zlib(budget),
        "lzwdecode": _bounded_lzw(budget),
        "rldecode": _bounded_rl(budget),
        "ascii85decode": _checked(saved["ascii85decode"], budget, _most_ascii85),
        "asciihexdecode": _checked(saved["asciihexdecode"], budget, _most_hex),
        "ccittfaxdecode": _bounded_ccitt(saved["ccittfaxdecode"], budget),
        "decompress_corrupted": lambda data: _inflate(data, budget, strict=False),
    }
    for name, value in replacements.items():
        setattr(pdftypes, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(pdftypes, name, value)


def in_chain(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The first exception of ``kind`` among ``exc`` and its causes (libraries wrap what they catch)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def reraise_cancellation(exc: BaseException) -> None:
    """Raise ``Cancelled`` when ``exc`` is (or wraps) a cancellation, or a signal asked for one:
    call it first in every clause that turns an exception into a diagnostic."""
    if in_chain(exc, KeyboardInterrupt) is not None:
        raise Cancelled("SIGINT") from exc
    found = in_chain(exc, Cancelled)
    if isinstance(found, Cancelled):
        raise found
    signal_name = cancel_requested()
    if signal_name is not None:
        raise Cancelled(signal_name) from exc


__all__ = [
    "DEFAULT_MAX_STREAM_BYTES",
    "DEFAULT_MAX_TOTAL_BYTES",
    "StreamDeadline",
    "StreamTooLarge",
    "bounded_streams",
    "in_chain",
    "reraise_cancellation",
]
