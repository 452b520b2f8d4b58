"""Every hook, exercised: a real plugin found through its entry point, each component driven by the CLI.

One ``test_hook_<name>`` per hookspec (a meta-test in ``tests/kernel/test_docs.py`` holds every hook
to it). The plugin is ``tests/fixtures/plugins/site-sample``, which imports only ``episteme_core.api``.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from episteme_core.testing import CliResult, invoke, read_chunks, read_documents, store_snapshot, validate


def _ok(*args: str, stdin: bytes | None = None) -> CliResult:
    result = invoke(*args, stdin=stdin)
    assert result.exit_code == 0, result.stderr
    if "--json" in args:
        validate(result.envelope, "cli-envelope")
    return result


def _sample_document(home: Path) -> None:
    """A snapshot of the sample content type at the sample family's host, extracted and chunked."""
    store_snapshot(home, "https://sample.example/notes", b"# First\nalpha words\nbeta words\n# Second\ngamma",
                   content_type="text/x-sample")
    _ok("--home", str(home), "extract", "--json")
    _ok("--home", str(home), "chunk", "--json")


def test_hook_episteme_sources(plugin_site, home: Path) -> None:
    """A plugin source becomes ``episteme ingest NAME``; its records get the block kind it declares."""
    plugin_site("sample")
    result = _ok("--home", str(home), "--json", "ingest", "sample-source", "first note", "second note")
    assert result.envelope["data"]["found"] == 1
    assert result.envelope["data"]["pack"]["status"] == "ok"
    shown = _ok("--home", str(home), "show", "sample:notes#2")
    assert shown.stdout.startswith("second note\n")
    [document] = read_documents(home)
    assert {block.kind for block in document.blocks()} == {"note"}


def test_hook_episteme_extractors(plugin_site, home: Path) -> None:
    """The plugin's extractor takes its content type, and its family the URLs of its host."""
    plugin_site("sample")
    _sample_document(home)
    [document] = read_documents(home)
    assert document.provenance.extractor == "sample-extractor" and document.family == "sample-family"
    assert [s.heading for s in document.sections] == ["First", "Second"]
    assert document.limits == ["sample-markup-only"]
    validate(document.to_json(), "document")


def test_hook_episteme_chunkers(plugin_site, home: Path) -> None:
    """The plugin's chunker (priority 10) takes the sample documents from ``window`` (priority 0)."""
    plugin_site("sample")
    _sample_document(home)
    chunks = read_chunks(home)
    assert {c.chunker for c in chunks} == {"sample-chunker/1"}
    assert [c.text for c in chunks] == ["alpha words", "beta words", "gamma"]
    assert all(c.limits == ["sample-markup-only"] for c in chunks)
    assert all([(d.code, d.level) for d in c.diagnostics] == [("SAMPLE_NOTED", "info")] for c in chunks)
    for chunk in chunks:
        validate(chunk.to_json(), "chunk")


def test_hook_episteme_indexers(plugin_site, home: Path) -> None:
    """A plugin indexer builds the shards (``index --indexer``), and ``query`` and ``ask`` reach them
    only through it (by option or config.json); another indexer refuses its shards, naming the
    command that rebuilds them; its shards travel as one file too."""
    plugin_site("sample")
    _sample_document(home)
    built = _ok("--home", str(home), "--json", "index", "--indexer", "sample-indexer")
    assert built.envelope["data"] == {"indexer": "sample-indexer", "chunks": 3, "shards": 1, "reshard": False}
    meta = json.loads((home / "shards" / "index.json").read_text())["meta"]
    assert meta["indexer"] == "sample-indexer"
    assert meta["shards"] == {"http-0001": {"rows": 3, "source": "http"}}

    found = _ok("--home", str(home), "--json", "query", "--term", "Words", "--indexer", "sample-indexer")
    data = found.envelope["data"]
    validate(data, "query-result")
    # the sample's own analyzer (words as written, no stemming) and its word-count scores
    assert data["terms"] == ["words"] and data["total"] == 2
    assert {r["snippet"] for r in data["results"]} == {"alpha words", "beta words"}
    assert [r["chunkId"] for r in data["results"]] == sorted(r["chunkId"] for r in data["results"])  # ties
    assert {(r["shard"], r["score"]) for r in data["results"]} == {("http-0001", 1.0)}

    refused = invoke("--home", str(home), "--json", "query", "--term", "words")  # bm25 by default
    error = refused.envelope["error"]
    assert refused.exit_code == 3 and error["code"] == "STALE_INDEX"
    assert "built by indexer 'sample-indexer'" in error["message"]
    assert error["hint"] == "run episteme index --indexer bm25"

    (home / "config.json").write_text(json.dumps({"indexer": "sample-indexer"}))
    by_config = _ok("--home", str(home), "--json", "query", "--term", "Words")
    assert by_config.envelope["data"] == data
    asked = _ok("--home", str(home), "--json", "ask", "gamma")
    answer = asked.envelope["data"]
    validate(answer, "ask-result")
    assert [p["text"] for p in answer["paragraphs"]] == ["gamma"]
    assert [s["name"] for s in answer["shards"]] == ["http-0001"]
    stale_ask = invoke("--home", str(home), "--json", "ask", "gamma", "--indexer", "bm25")
    assert stale_ask.exit_code == 3
    assert stale_ask.envelope["error"]["hint"] == "run episteme index --indexer bm25"

    exported = _ok("--home", str(home), "--json", "index", "--out", "-")
    artifact = exported.envelope["data"]["artifact"]
    validate(artifact, "artifact")
    assert artifact["indexer"] == "sample-indexer" and artifact["mediaType"] == "application/x-tar"
    from_file = _ok("--json", "query", "--term", "Words", "--index", "-",
                    stdin=json.dumps(artifact).encode())
    assert from_file.envelope["data"] == data

    unknown = invoke("--home", str(home), "--json", "index", "--indexer", "nope")
    assert unknown.exit_code == 3 and "sample-indexer" in unknown.envelope["error"]["message"]
    (home / "config.json").write_text(json.dumps({"indexer": "nope"}))
    misconfigured = invoke("--home", str(home), "--json", "query", "--term", "words")
    assert misconfigured.exit_code == 3 and "config.json" in misconfigured.envelope["error"]["message"]


def test_hook_episteme_readers(plugin_site, home: Path) -> None:
    """A configured reader of the plugin's kind names paragraphs for ``ask``."""
    plugin_site("sample")
    # Each paragraph longer than a scoring run, so each is a candidate of its own, and than the two
    # thirds of the budget the passage named first may show whole.
    swims, sings, sails = ("the whale swims. " * 150).strip(), ("the whale sings. " * 150).strip(), (
        "a ship sails. " * 180).strip()
    _ok("--home", str(home), "ingest", "sample-source", swims, sings, sails)
    (home / "config.json").write_text(json.dumps({"readers": [{"name": "last", "kind": "sample-reader"}]}))
    result = _ok("--home", str(home), "--json", "ask", "whale")
    data = result.envelope["data"]
    validate(data, "ask-result")
    assert [(r["name"], r["kind"]) for r in data["readers"]] == [("last", "sample-reader")]
    texts = [paragraph["text"] for paragraph in data["paragraphs"]]
    # the one paragraph named, verbatim: as long as it is, its best window (a slice with its place)
    assert len(texts) == 1 and any(texts[0] in whole for whole in (swims, sings))
    assert data["paragraphs"][0]["excerpt"] is not None


def test_hook_episteme_exporters(plugin_site, home: Path, tmp_path: Path) -> None:
    """The export command owns --out: a file written atomically, or the bytes in data.artifact."""
    plugin_site("sample")
    _sample_document(home)
    out = tmp_path / "out" / "ids.json"
    out.parent.mkdir()
    written = _ok("--home", str(home), "--json", "export", "sample-exporter", "--out", str(out),
                  "--label", "x")
    data = written.envelope["data"]
    body = out.read_bytes()
    assert json.loads(body) == {"label": "x", "chunks": sorted(c.id for c in read_chunks(home))}
    assert data["bytes"] == len(body) and data["outputPath"] == str(out) and data["chunks"] == 3
    assert [p.name for p in out.parent.iterdir()] == ["ids.json"]  # no temp file left
    inline = _ok("--home", str(home), "--json", "export", "sample-exporter", "--out", "-", "--label", "x")
    artifact = inline.envelope["data"]["artifact"]
    validate(artifact, "artifact")
    assert artifact["encoding"] == "utf-8" and artifact["data"].encode() == body
    assert inline.envelope["data"]["outputPath"] is None
    refused = invoke("--home", str(home), "export", "sample-exporter", "--out", "-")
    assert refused.exit_code == 2 and "--json" in refused.stderr
    binary = _ok("--home", str(home), "--json", "export", "warc", "--out", "-")
    warc = binary.envelope["data"]["artifact"]
    validate(warc, "artifact")
    assert warc["encoding"] == "base64" and base64.b64decode(warc["data"])[:4] == b"\x1f\x8b\x08\x00"


def test_export_out_must_name_a_file_in_a_folder_that_exists(plugin_site, home: Path, tmp_path: Path) -> None:
    """A folder, a path under a file and a missing folder are INVALID_USAGE with a hint; nothing is
    written and no folder is made."""
    plugin_site("sample")
    _sample_document(home)
    (tmp_path / "a-file").write_text("x")
    for out, said in ((tmp_path, "is a folder, not a file"),
                      (tmp_path / "a-file" / "x.json", "is a file, not a folder"),
                      (tmp_path / "missing" / "x.json", "does not exist")):
        result = invoke("--home", str(home), "--json", "export", "sample-exporter", "--out", str(out))
        assert result.exit_code == 2, result.stderr
        error = result.envelope["error"]
        assert error["code"] == "INVALID_USAGE" and said in error["message"] and error["hint"]
    assert not (tmp_path / "missing").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "home"]


def test_an_exporter_gets_a_binary_stream_text_wrappers_and_csv_work_on() -> None:
    import csv
    import io

    from episteme_core.store.output import export_bytes

    def produce(out: io.BufferedIOBase) -> dict[str, int]:
        assert out.writable() and not out.readable() and not out.seekable()
        text = io.TextIOWrapper(out, encoding="utf-8", newline="")
        csv.writer(text).writerows([["a", "b"], ["é", "2"]])
        return {"rows": 2}  # the wrapper is dropped unflushed: closing it flushes into the stream

    exported = export_bytes(produce, "-")
    assert exported.data == "a,b\r\né,2\r\n".encode()
    assert exported.size == len(exported.data) and exported.summary == {"rows": 2}


def test_hook_episteme_commands(plugin_site) -> None:
    """The plugin's command parses its options and returns its outcome through the envelope."""
    plugin_site("sample")
    result = _ok("--json", "sample-read", "--input", "-", stdin=b'{"a": [1]}')
    assert result.envelope["command"] == "sample-read"
    assert result.envelope["data"] == {"type": "dict"}
