"""A source ``forget`` removed is refused by every capture (before any byte is fetched or stored)
unless the run is given ``--allow-forgotten``; a manifest naming an unknown family or extractor is
refused when it is read, naming the entry and the known names."""

from __future__ import annotations

from pathlib import Path

from episteme_core.testing import invoke

from .conftest import TestServer, snapshot, write_manifest

PAGE = b"<h1>Private</h1><p>A private page with a secret-phrase-42.</p>"


def _holders(home: Path, needle: bytes) -> list[str]:
    return [str(p) for p in home.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_a_forgotten_url_is_never_fetched_again(tmp_path: Path, home: Path, server: TestServer) -> None:
    private = server.static("/private", PAGE, {"Content-Type": "text/html"})
    public = server.static("/public", b"<p>public evidence</p>", {"Content-Type": "text/html"})
    manifest = write_manifest(tmp_path, [{"url": private}, {"url": public}])
    assert snapshot(home, manifest).exit_code == 0
    forgot = invoke("--home", str(home), "forget", "--source", private, "--reason", "private", "--json")
    assert forgot.exit_code == 0, forgot.stderr
    assert _holders(home, b"secret-phrase-42") == []
    hits = server.count("/private")
    again = snapshot(home, manifest)
    assert again.exit_code == 0  # the other source was captured: the run is not all failed
    rows = {row["source"]: row for row in again.envelope["data"]["sources"]}
    assert rows[private]["status"] == "failed" and rows[private]["code"] == "INVALID_INPUT"
    assert "was forgotten" in rows[private]["message"]
    assert server.count("/private") == hits  # refused before the request
    assert _holders(home, b"secret-phrase-42") == []
    assert _holders(home, private.encode()) == []  # a refusal is not an observation: no log line
    only = write_manifest(tmp_path, [{"url": private}], name="only.json")
    alone = snapshot(home, only)
    assert alone.exit_code == 3 and alone.envelope["error"]["code"] == "INVALID_INPUT"
    allowed = snapshot(home, only, "--allow-forgotten")
    assert allowed.exit_code == 0 and server.count("/private") == hits + 1
    assert _holders(home, b"secret-phrase-42") != []
    assert invoke("--home", str(home), "verify").exit_code == 0


def test_a_manifest_naming_an_unknown_family_or_extractor_is_refused_when_read(
        tmp_path: Path, home: Path, server: TestServer) -> None:
    url = server.static("/a", b"<p>evidence</p>", {"Content-Type": "text/html"})
    for field, value in (("family", "no-such-family"), ("extractor", "docx")):
        manifest = write_manifest(tmp_path, [{"url": url}, {"url": url + "?2", field: value}])
        result = snapshot(home, manifest)
        assert result.exit_code == 3, result.stderr
        error = result.envelope["error"]
        assert error["code"] == "INVALID_INPUT"
        assert error["message"].startswith(f"{manifest}[1].{field}: {value!r} is not a known {field}")
        assert error["details"]["entry"] == 1 and error["details"]["field"] == field
        known = error["details"]["known"]
        wanted = {"generic"} if field == "family" else {"html", "pdf", "record", "text", "xml"}
        assert wanted <= set(known)
        assert not (home / "snapshots" / "index.json").exists()  # nothing committed
        piped = invoke("--home", str(home), "pipeline", "--manifest", str(manifest), "--allow-localhost",
                       "--json")
        assert piped.exit_code == 3 and piped.envelope["error"]["details"]["field"] == field
    manifest = write_manifest(tmp_path, [{"url": url, "family": "generic", "extractor": "html"}])
    assert snapshot(home, manifest).exit_code == 0
