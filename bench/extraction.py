"""Extraction throughput: episteme's html and pdf extractors beside the bare libraries.

html: MB/s of ``HtmlExtractor`` vs ``html5lib.parse`` on the same files; pdf: pages/s of
``PdfExtractor`` vs pdfplumber's ``extract_text`` on every page. Prints a Markdown table for
docs/benchmarks.md. Usage: python bench/extraction.py [CORPUS_DIR] (default ../shared/corpus).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from episteme_core.canonical import sha256_hex
from episteme_core.extract.api import ExtractRequest, Family
from episteme_core.records import SnapshotRecord


def _request(data: bytes, content_type: str) -> ExtractRequest:
    record = SnapshotRecord(id="0" * 64, capture_kind="file", source="https://bench.invalid/x",
                            final_url=None, content_type=content_type, charset=None,
                            byte_length=len(data), content_sha256=sha256_hex(data),
                            observed_at="2020-01-01T00:00:00Z")
    return ExtractRequest(record=record, content=data, family=Family())


def _best(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    import io

    import html5lib
    import pdfplumber

    from episteme_core.extract.html import HtmlExtractor
    from episteme_core.extract.pdf import PdfExtractor

    default = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    print("| file | size | bare | episteme | episteme / bare |")
    print("|---|---:|---:|---:|---:|")
    for path in sorted((corpus / "w3c").glob("*.html")) + sorted((corpus / "rfc").glob("*.html")):
        data = path.read_bytes()
        mb = len(data) / 1e6
        bare = _best(lambda d=data: html5lib.parse(d, treebuilder="etree", namespaceHTMLElements=False))
        ours = _best(lambda d=data: HtmlExtractor().extract(_request(d, "text/html")))
        print(f"| {path.name} | {mb:.2f} MB | {mb / bare:.2f} MB/s | {mb / ours:.2f} MB/s "
              f"| {ours / bare:.2f}x |")
    for path in sorted((corpus / "pdf").glob("*.pdf")):
        data = path.read_bytes()
        try:
            with pdfplumber.open(io.BytesIO(data)) as pdf:
                pages = len(pdf.pages)
        except Exception:
            continue
        if not pages:
            continue

        def bare_pdf(d: bytes = data) -> None:
            with pdfplumber.open(io.BytesIO(d)) as pdf:
                for page in pdf.pages:
                    page.extract_text()

        bare = _best(bare_pdf, 2)
        ours = _best(lambda d=data: PdfExtractor().extract(_request(d, "application/pdf")), 2)
        print(f"| {path.name} | {pages} pages | {pages / bare:.1f} pages/s | {pages / ours:.1f} pages/s "
              f"| {ours / bare:.2f}x |")


if __name__ == "__main__":
    main()
