"""Re-extraction reuses what did not change: same snapshot and configuration, same bytes, no work."""

from __future__ import annotations

from pathlib import Path

from episteme_core.stages.documents import read_documents
from episteme_core.store.home import Home
from episteme_core.testing import invoke, run_cli

from .conftest import add_snapshots

PAGE = b"<!doctype html><title>T</title><h1 id=a>A</h1><p>Alpha MUST be.</p><h2 id=b>B</h2><p>Beta.</p>"


def _extract(home: Path, *args: str) -> dict:
    result = invoke("extract", "--json", "--home", str(home), *args)
    assert result.exit_code == 0, result.stderr
    return result.envelope["data"]


def _outcomes(data: dict) -> dict[str, str]:
    return {row["source"]: row["outcome"] for row in data["documents"]}


def _stage_bytes(home: Path) -> dict[str, bytes]:
    stage = home / "documents"
    return {p.relative_to(stage).as_posix(): p.read_bytes() for p in sorted(stage.rglob("*")) if p.is_file()}


def test_rerun_reuses_and_keeps_the_bytes(home: Path) -> None:
    add_snapshots(home, [
        ("https://example.org/page", PAGE, "text/html", {}),
        ("https://example.org/n.txt", b"one\n\ntwo", "text/plain", {}),
        ("https://example.org/junk.pdf", b"%PDF-1.4 nothing", "application/pdf", {}),
    ])
    first = _extract(home)
    assert _outcomes(first) == {"https://example.org/page": "extracted",
                                "https://example.org/n.txt": "extracted",
                                "https://example.org/junk.pdf": "failed"}
    assert first["counts"] == {"extracted": 2, "reused": 0, "failed": 1}
    before = _stage_bytes(home)
    index_mtime = (home / "documents" / "index.json").stat().st_mtime_ns
    second = _extract(home)
    assert _outcomes(second) == {"https://example.org/page": "reused",
                                 "https://example.org/n.txt": "reused",
                                 "https://example.org/junk.pdf": "failed"}
    assert second["counts"] == {"extracted": 0, "reused": 2, "failed": 1}
    assert _stage_bytes(home) == before
    assert (home / "documents" / "index.json").stat().st_mtime_ns == index_mtime  # not rewritten
    # the rows of a reused document say the same as when it was extracted
    strip = [{k: v for k, v in row.items() if k != "outcome"} for row in first["documents"]]
    assert strip == [{k: v for k, v in row.items() if k != "outcome"} for row in second["documents"]]
    # forcing re-extracts everything and gives the same bytes
    forced = _extract(home, "--force")
    assert forced["counts"] == {"extracted": 2, "reused": 0, "failed": 1}
    assert _stage_bytes(home) == before


def test_reused_bytes_equal_a_fresh_extraction_in_a_new_process(home: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    for where in (home, other):
        add_snapshots(where, [("https://example.org/page", PAGE, "text/html", {}),
                              ("https://example.org/n.txt", b"one\n\ntwo", "text/plain", {})])
    _extract(home)
    _extract(home)  # reused
    result = run_cli(["extract", "--json", "--home", str(other)], env={"PYTHONHASHSEED": "7"})
    assert result.exit_code == 0, result.stderr
    index = Path("documents") / "index.json"
    assert (home / index).read_bytes() == (other / index).read_bytes()


def test_changed_option_or_family_or_snapshot_re_extracts(home: Path, fixtures: Path) -> None:
    pdf = (fixtures / "pdfminer__naacl06-shinyama.pdf").read_bytes()
    add_snapshots(home, [("https://example.org/page", PAGE, "text/html", {}),
                         ("https://example.org/paper.pdf", pdf, "application/pdf", {})])
    _extract(home)
    # an option only the pdf extractor reads: the pdf re-extracts, the html is reused
    data = _extract(home, "--max-pages", "2")
    assert _outcomes(data) == {"https://example.org/page": "reused",
                               "https://example.org/paper.pdf": "extracted"}
    assert _outcomes(_extract(home, "--max-pages", "2"))["https://example.org/paper.pdf"] == "reused"
    # the manifest names another family for the same bytes: a new configuration
    add_snapshots(home, [("https://example.org/page", PAGE, "text/html", {"family": "generic",
                                                                         "authority": "normative"})])
    data = _extract(home, "--max-pages", "2")
    assert _outcomes(data)["https://example.org/page"] == "extracted"
    (page,) = [d for d in read_documents(Home(home)) if d.source == "https://example.org/page"]
    assert page.authority == "normative"
    # a fragment is part of the configuration too
    add_snapshots(home, [("https://example.org/page", PAGE, "text/html", {"fragment": "b"})])
    assert _outcomes(_extract(home, "--max-pages", "2"))["https://example.org/page"] == "extracted"
    (page,) = [d for d in read_documents(Home(home)) if d.source == "https://example.org/page"]
    assert [s.id for s in page.sections] == ["b"]
    # a new snapshot of the source
    add_snapshots(home, [("https://example.org/page", PAGE + b"<p>more</p>", "text/html", {"fragment": "b"})])
    assert _outcomes(_extract(home, "--max-pages", "2"))["https://example.org/page"] == "extracted"


def test_named_sources_reuse_and_keep_the_others(home: Path) -> None:
    add_snapshots(home, [("https://example.org/a.txt", b"a", "text/plain", {}),
                         ("https://example.org/b.txt", b"b", "text/plain", {})])
    _extract(home)
    data = _extract(home, "https://example.org/a.txt")
    assert _outcomes(data) == {"https://example.org/a.txt": "reused"}
    assert [d.source for d in read_documents(Home(home))] == ["https://example.org/a.txt",
                                                              "https://example.org/b.txt"]


def test_tampered_reuse_record_is_not_trusted(home: Path) -> None:
    """A committed object that is missing is extracted again rather than named by the new index."""
    add_snapshots(home, [("https://example.org/a.txt", b"a", "text/plain", {})])
    _extract(home)
    for path in (home / "documents" / "objects").rglob("*.json"):
        path.unlink()
    assert _outcomes(_extract(home)) == {"https://example.org/a.txt": "extracted"}
    assert read_documents(Home(home))[0].blocks()[0].text == "a"
