"""The stat cache: an unchanged file is not read again, --rehash reads every file, a changed file is
read, and verify still checks every blob whatever the cache says."""

from __future__ import annotations

import json
import os
from pathlib import Path

from episteme_core.cli.main import run
from episteme_core.testing.crashmatrix import episteme

from .audit import opened_while
from .conftest import write_corpus


def test_unchanged_files_are_not_read_again(tmp_path: Path, home: Path) -> None:
    map_path = write_corpus(tmp_path, 20)
    files = tmp_path / "files"
    first = opened_while(files, ["--home", str(home), "manual-ingest", "--map", str(map_path)])
    assert len(first) == 20
    assert len(json.loads((home / "stat-cache.json").read_text())["files"]) == 20
    again = opened_while(files, ["--home", str(home), "manual-ingest", "--map", str(map_path)])
    assert again == []


def test_rehash_reads_every_file(tmp_path: Path, home: Path) -> None:
    map_path = write_corpus(tmp_path, 5)
    files = tmp_path / "files"
    opened_while(files, ["--home", str(home), "manual-ingest", "--map", str(map_path)])
    again = opened_while(files, ["--home", str(home), "manual-ingest", "--map", str(map_path), "--rehash"])
    assert len(again) == 5


def test_a_changed_file_is_read_and_captured_anew(tmp_path: Path, home: Path) -> None:
    map_path = write_corpus(tmp_path, 5)
    files = tmp_path / "files"
    opened_while(files, ["--home", str(home), "manual-ingest", "--map", str(map_path)])
    target = files / "f00002.txt"
    before = target.stat()
    text = target.read_text("utf-8")
    target.write_text(text[::-1], "utf-8")  # the same size, other bytes
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))  # mtime put back; ctime moves
    again = opened_while(files, ["--home", str(home), "manual-ingest", "--map", str(map_path), "--json"])
    assert again == [str(target)]
    from episteme_core.stages.snapshots import read_catalog
    from episteme_core.store.home import Home

    catalog = read_catalog(Home(home))
    assert len(catalog.state("https://example.org/f2").history) == 2
    assert all(len(catalog.state(f"https://example.org/f{n}").history) == 1 for n in (0, 1, 3, 4))


def test_a_missing_blob_is_stored_again_and_verify_checks_every_blob(tmp_path: Path, home: Path) -> None:
    map_path = write_corpus(tmp_path, 3)
    assert run(["--home", str(home), "manual-ingest", "--map", str(map_path)]) == 0
    blobs = sorted(p for p in (home / "blobs").rglob("*") if p.is_file())
    assert len(blobs) == 3
    blobs[0].unlink()  # the cache vouches for the file, but its blob is gone: hashed and stored again
    assert run(["--home", str(home), "manual-ingest", "--map", str(map_path)]) == 0
    assert blobs[0].is_file()
    assert episteme(home, ["verify"]).returncode == 0
    blobs[1].chmod(0o644)
    blobs[1].write_bytes(b"tampered")  # the stat cache never looks at blobs; verify reads them all
    proc = episteme(home, ["verify", "--json"])
    assert proc.returncode != 0
    assert blobs[1].name in proc.stdout.decode() + proc.stderr.decode()
