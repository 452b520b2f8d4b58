"""PDF text completeness: word recall of episteme's pdf extractor against pdfplumber's plain text.

For every PDF of ``../shared/corpus`` and of ``tests/fixtures/extract``, each page's words from
pdfplumber's ``page.extract_text()`` are looked up in the blocks the extractor made for that page
(``episteme_core.extract.pdf_recall``: glued words are spelled by consecutive words). Prints a
Markdown table for docs/benchmarks.md: pages, words, the lowest page's recall, the whole file's, and
the words missed. A file pdfplumber cannot open (empty, encrypted without its password) is listed
with the reason. Target: every page at least 0.99.

    python bench/pdf_recall.py [--corpus DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TARGET = 0.99


def extract(data: bytes) -> object:
    from episteme_core.extract.family import Family
    from episteme_core.extract.pdf import PdfExtractor
    from episteme_core.records.canonical import sha256_hex
    from episteme_core.records.extraction import ExtractRequest
    from episteme_core.records.storage import SnapshotRecord

    record = SnapshotRecord(id="0" * 64, capture_kind="file", source="https://example.org/x.pdf",
                            final_url=None, content_type="application/pdf", charset=None,
                            byte_length=len(data), content_sha256=sha256_hex(data),
                            observed_at="2020-01-01T00:00:00Z")
    return PdfExtractor().extract(ExtractRequest(record=record, content=data, family=Family(), options={}))


def main() -> None:
    from episteme_core.extract.pdf_recall import document_recall, reference_pages

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    args = parser.parse_args()
    files = sorted((args.corpus / "pdf").glob("*.pdf")) if (args.corpus / "pdf").is_dir() else []
    if not files:
        print(f"(no corpus PDFs at {args.corpus}; the fixtures only)")
    files += sorted((ROOT / "tests" / "fixtures" / "extract").glob("*.pdf"))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}\n")
    print("| file | pages | words | lowest page | whole file | missed (first) |")
    print("|---|---:|---:|---:|---:|---|")
    below = 0
    seen: set[bytes] = set()
    for path in files:
        data = path.read_bytes()
        if data in seen:  # a fixture copied from the corpus
            continue
        seen.add(data)
        where = f"{path.parent.name}/{path.name}"
        try:
            reference = reference_pages(data)
        except Exception as exc:  # empty, encrypted: pdfplumber itself cannot read it
            print(f"| {where} | – | – | – | – | pdfplumber cannot open it ({type(exc).__name__}) |")
            continue
        pages = document_recall(extract(data), reference)
        words = sum(p.words for p in pages)
        found = sum(p.found for p in pages)
        lowest = min((p.recall for p in pages), default=1.0)
        below += sum(1 for p in pages if p.recall < TARGET)
        missed = [w for p in pages for w in p.missing][:6]
        print(f"| {where} | {len(pages)} | {words} | {lowest:.4f} | {found / words if words else 1.0:.4f} | "
              f"{' '.join(missed) if missed else '–'} |")
    print(f"\npages below {TARGET}: {below}")


if __name__ == "__main__":
    main()
