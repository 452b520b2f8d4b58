"""`episteme manual-ingest`: regular files only, bounded, content-addressed, idempotent, all-or-nothing."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest

from episteme_core.stages.snapshots import read_catalog
from episteme_core.store.home import Home
from episteme_core.store.log import Log
from episteme_core.testing import CliResult, invoke, run_cli, validate

from .conftest import tree

URL = "https://example.org/spec"


def _map(folder: Path, entries: list[dict[str, Any]]) -> Path:
    path = folder / "map.json"
    path.write_text(json.dumps(entries))
    return path


def _ingest(home: Path, map_path: Path, *extra: str) -> CliResult:
    return invoke("manual-ingest", "--json", "--home", str(home), "--map", str(map_path), *extra)


def test_ingest_then_unchanged_then_changed(home: Path, tmp_path: Path) -> None:
    doc = tmp_path / "spec.html"
    doc.write_bytes(b"<p>one</p>")
    map_path = _map(tmp_path, [{"sourceUrl": URL + "#s1", "localPath": "spec.html"}])
    first = _ingest(home, map_path)
    assert first.exit_code == 0, first.stderr
    validate(first.envelope["data"], "snapshot-result")
    [source] = first.envelope["data"]["sources"]
    assert source["status"] == "captured" and source["contentType"] == "text/html"
    catalog = read_catalog(Home(home))
    record = catalog.latest(URL)
    assert (record.capture_kind, record.final_url, record.etag) == ("file", URL, None)
    assert catalog.options(URL) == {"fragment": "s1"}
    assert catalog.content(record) == b"<p>one</p>"

    def stored() -> dict[str, bytes]:  # the stat cache may settle the file now: it is no stored content
        return {path: data for path, data in tree(home).items() if path != "stat-cache.json"}

    before = stored()
    again = _ingest(home, map_path, "--list-unchanged")
    validate(again.envelope["data"], "snapshot-result")
    assert again.envelope["data"]["sources"][0]["status"] == "unchanged"
    assert again.envelope["data"]["sources"][0]["snapshotId"] == record.id
    assert again.envelope["data"]["fingerprint"] == first.envelope["data"]["fingerprint"]
    assert again.envelope["data"]["unchangedListed"] is True
    assert stored() == before
    counted = _ingest(home, map_path)  # by default an unchanged file is counted, not listed
    validate(counted.envelope["data"], "snapshot-result")
    assert counted.envelope["data"]["sources"] == [] and counted.envelope["data"]["unchangedListed"] is False
    assert counted.envelope["data"]["counts"] == {"captured": 0, "unchanged": 1, "failed": 0}
    assert counted.envelope["data"]["fingerprint"] == first.envelope["data"]["fingerprint"]

    doc.write_bytes(b"<p>two</p>")
    changed = _ingest(home, map_path)
    assert changed.envelope["data"]["sources"][0]["status"] == "captured"
    catalog = read_catalog(Home(home))
    assert [r.id for r in catalog.history(URL)][0] == record.id
    assert catalog.content(catalog.record(record.id)) == b"<p>one</p>"
    statuses = [e.status for e in Log(Home(home).log_path).entries()]
    assert statuses == ["captured", "captured"]


def test_content_type_from_map_with_charset(home: Path, tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes("caf\xe9".encode("latin-1"))
    result = _ingest(home, _map(tmp_path, [{"sourceUrl": URL, "localPath": "a.bin",
                                            "contentType": "text/plain; charset=utf-8"}]))
    assert result.exit_code == 0
    record = read_catalog(Home(home)).latest(URL)
    assert (record.content_type, record.charset) == ("text/plain", "utf-8")
    assert [w["code"] for w in result.envelope["warnings"]] == ["CHARSET_MISMATCH"]


def _make_symlink(tmp_path: Path) -> str:
    (tmp_path / "real.txt").write_text("x")
    os.symlink(tmp_path / "real.txt", tmp_path / "link.txt")
    return "link.txt"


def _make_dir(tmp_path: Path) -> str:
    (tmp_path / "folder").mkdir()
    return "folder"


def _make_fifo(tmp_path: Path) -> str:
    os.mkfifo(tmp_path / "fifo")
    return "fifo"


def _make_socket(tmp_path: Path) -> str:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))
    return "sock"


def _make_symlinked_folder(tmp_path: Path) -> str:
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    os.symlink(outside, tmp_path / "escape")
    return "escape/secret.txt"


@pytest.mark.parametrize("make", [_make_symlink, _make_dir, _make_fifo, _make_socket,
                                  _make_symlinked_folder, lambda tmp: "missing.txt"])
def test_non_regular_files_are_refused_by_name(home: Path, tmp_path: Path, make: Any) -> None:
    (tmp_path / "good.txt").write_text("good")
    name = make(tmp_path)
    result = _ingest(home, _map(tmp_path, [{"sourceUrl": URL + "/good", "localPath": "good.txt"},
                                           {"sourceUrl": URL, "localPath": name}]))
    assert result.exit_code == 3, result.stderr
    error = result.envelope["error"]
    assert error["code"] == "INVALID_INPUT" and error["details"]["entry"] == 1
    assert name.split("/")[0] in error["message"]
    assert not (home / "snapshots").exists() and not (home / "blobs").exists()


def test_max_bytes_at_and_past_the_bound(home: Path, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"z" * 100)
    map_path = _map(tmp_path, [{"sourceUrl": URL, "localPath": "f.txt"}])
    refused = _ingest(home, map_path, "--max-bytes", "99")
    assert refused.exit_code == 5
    assert refused.envelope["error"]["details"]["bytes"] == 100
    assert refused.envelope["error"]["details"]["limit"] == 99
    assert not home.joinpath("blobs").exists()
    assert _ingest(home, map_path, "--max-bytes", "100").exit_code == 0


def test_failed_ingest_leaves_previous_commit(home: Path, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    assert _ingest(home, _map(tmp_path, [{"sourceUrl": URL, "localPath": "a.txt"}])).exit_code == 0
    before = tree(home)
    (tmp_path / "a.txt").write_text("changed")
    bad = _map(tmp_path, [{"sourceUrl": URL, "localPath": "a.txt"},
                          {"sourceUrl": URL + "/2", "localPath": "nope.txt"}])
    assert _ingest(home, bad).exit_code == 3
    assert tree(home) == before


def test_root_option_and_stdin(home: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "x.md").write_text("# x")
    raw = json.dumps([{"sourceUrl": URL, "localPath": "x.md"}]).encode()
    result = invoke("manual-ingest", "--json", "--home", str(home), "--map", "-", "--root", str(data),
                    stdin=raw)
    assert result.exit_code == 0, result.stderr
    assert read_catalog(Home(home)).latest(URL).content_type == "text/markdown"


def test_tampered_blob_is_detected_on_reingest(home: Path, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("original")
    map_path = _map(tmp_path, [{"sourceUrl": URL, "localPath": "a.txt"}])
    assert _ingest(home, map_path).exit_code == 0
    catalog = read_catalog(Home(home))
    catalog.blob_path(catalog.latest(URL)).write_text("tampered")
    result = _ingest(home, map_path)
    assert result.exit_code == 3 and "tampered" in result.envelope["error"]["message"]


def test_snapshot_ids_do_not_depend_on_hash_seed_or_clock(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("stable")
    (tmp_path / "b.html").write_text("<p>b</p>")
    map_path = _map(tmp_path, [{"sourceUrl": URL + "/b", "localPath": "b.html"},
                               {"sourceUrl": URL + "/a", "localPath": "a.txt"}])
    ids = []
    for seed in ("1", "2"):
        home = tmp_path / f"home{seed}"
        result = run_cli(["manual-ingest", "--json", "--home", str(home), "--map", str(map_path)],
                         env={"PYTHONHASHSEED": seed})
        assert result.exit_code == 0, result.stderr
        ids.append([s["snapshotId"] for s in json.loads(result.stdout)["data"]["sources"]])
    assert ids[0] == ids[1]


def test_snapshots_stage_override(home: Path, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    elsewhere = tmp_path / "elsewhere"
    result = _ingest(home, _map(tmp_path, [{"sourceUrl": URL, "localPath": "a.txt"}]),
                     "--snapshots", str(elsewhere))
    assert result.exit_code == 0, result.stderr
    assert (elsewhere / "index.json").is_file() and not (home / "snapshots").exists()
    assert (home / "blobs").is_dir()  # bytes stay in the home's blob store
