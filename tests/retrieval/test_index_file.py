"""The index as one file: ``index --out FILE|-`` writes the committed shards as a tar (or its artifact
JSON), and ``query --index FILE|-`` answers from it, bounded, exactly as the home answers."""

from __future__ import annotations

import base64
import io
import json
import tarfile
from pathlib import Path

import pytest

from episteme_core.kernel.defaults import DEFAULT_MAX_INDEX_BYTES, MAX_INDEX_BYTES
from episteme_core.testing import invoke, run_cli, validate

from .conftest import commit, make_document, ok

QUERIES = (
    ["--term", "request"],
    ["--term", "header value", "--limit", "3", "--offset", "1"],
    ["--term", '"a header"', "--source", "http"],
    ["--term", "fetch", "--normativity", "unknown", "--max-chars", "80"],
)


def _docs() -> list:  # type: ignore[type-arg]
    return [
        make_document("https://e.org/a", [("Fetch", ["fetch a request", "abort the fetch"]),
                                          ("More", ["a request of a header"])]),
        make_document("https://e.org/b", [("Parse", ["parse a header", "a header value"])]),
        make_document("book:c/x", [("x", ["a fetch in a book", "a header value, again", "nothing"])],
                      kind="books", document_type="record"),
    ]


@pytest.fixture
def indexed(tmp_path: Path) -> Path:
    root = tmp_path / "home"
    root.mkdir()
    (root / "config.json").write_text('{"shard_size": 2}')  # several shards per source
    commit(root, _docs())
    ok("--home", str(root), "chunk", "--max-chars", "256", "--overlap-chars", "0")
    ok("--home", str(root), "index")
    return root


def _query(*args: str, stdin: bytes | None = None) -> dict:  # type: ignore[type-arg]
    result = invoke(*args, "--json", stdin=stdin)
    assert result.exit_code == 0, result.stderr
    validate(result.envelope, "cli-envelope")
    return result.envelope["data"]  # type: ignore[no-any-return]


def test_an_index_file_answers_as_the_home_does(indexed: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "index.tar"
    out.parent.mkdir()
    data = ok("--home", str(indexed), "index", "--out", str(out))
    body = out.read_bytes()
    assert data["outputPath"] == str(out) and data["bytes"] == len(body) and data["changed"] is False
    assert [p.name for p in out.parent.iterdir()] == ["index.tar"]  # written atomically, no temp left
    with tarfile.open(out) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names[0] == "index.json" and len(names) == 1 + data["shards"] > 3
    assert all((m.mode, m.mtime, m.uid, m.gid, m.uname, m.isreg()) == (0o444, 0, 0, 0, "", True)
               for m in members)
    with tarfile.open(out) as tar:
        commit_meta = json.loads(tar.extractfile("index.json").read())["meta"]  # type: ignore[union-attr]
    validate(commit_meta, "shard")
    assert commit_meta["indexer"] == "bm25" and "logBytes" not in commit_meta

    inline = ok("--home", str(indexed), "index", "--out", "-")
    artifact = inline["artifact"]
    validate(artifact, "artifact")
    assert base64.b64decode(artifact["data"]) == body and artifact["sha256"] == data["sha256"]
    assert (artifact["indexer"], artifact["shards"], artifact["chunks"]) == (
        "bm25", data["shards"], data["chunks"])
    artifact_file = tmp_path / "artifact.json"
    artifact_file.write_text(json.dumps(artifact, indent=2))  # as jq would print it

    elsewhere = str(tmp_path / "no-home")  # the file is answered as it is: no home is consulted
    for args in QUERIES:
        expected = _query("--home", str(indexed), "query", *args)
        assert expected["results"], args
        assert _query("--home", elsewhere, "query", *args, "--index", str(out)) == expected
        assert _query("--home", elsewhere, "query", *args, "--index", str(artifact_file)) == expected
        assert _query("--home", elsewhere, "query", *args, "--index", "-", stdin=body) == expected
        assert _query("--home", elsewhere, "query", *args, "--index", "-",
                      stdin=json.dumps(artifact).encode()) == expected


def test_an_index_file_has_the_same_bytes_for_the_same_chunks(tmp_path: Path) -> None:
    """Built twice in two homes under two hash seeds: the same bytes (no clock, no home path)."""
    artifacts = []
    for seed in ("1", "2"):
        root = tmp_path / f"home-{seed}"
        commit(root, _docs())
        env = {"PYTHONHASHSEED": seed, "EPISTEME_LOAD_PLUGINS": ""}
        for step in (["chunk"], ["index", "--out", "-"]):
            result = run_cli(["--home", str(root), "--json", *step], env=env)
            assert result.exit_code == 0, result.stderr
        artifacts.append(result.envelope["data"]["artifact"])
    assert artifacts[0] == artifacts[1]


def test_the_index_input_is_bounded_at_and_past_the_limit(indexed: Path, tmp_path: Path) -> None:
    out = tmp_path / "index.tar"
    ok("--home", str(indexed), "index", "--out", str(out))
    body = out.read_bytes()
    text = json.dumps(ok("--home", str(indexed), "index", "--out", "-")["artifact"]).encode()
    for source, size, stdin in ((str(out), len(body), None), ("-", len(body), body), ("-", len(text), text)):
        base = ("query", "--term", "fetch", "--index", source)
        at = invoke(*base, "--max-input-bytes", str(size), "--json", stdin=stdin)
        assert at.exit_code == 0, at.stderr
        past = invoke(*base, "--max-input-bytes", str(size - 1), "--json", stdin=stdin)
        assert past.exit_code == 5 and past.envelope["error"]["code"] == "LIMIT_EXCEEDED"
        assert past.envelope["error"]["details"]["maxBytes"] == size - 1
    for value in ("0", str(MAX_INDEX_BYTES + 1)):
        refused = invoke("query", "--term", "x", "--index", str(out), "--max-input-bytes", value)
        assert refused.exit_code == 2
    assert 64 * 1024 * 1024 < DEFAULT_MAX_INDEX_BYTES  # indexes are larger than manifests


def _tar(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_a_bad_index_file_is_refused_by_name(indexed: Path, tmp_path: Path) -> None:
    out = tmp_path / "index.tar"
    ok("--home", str(indexed), "index", "--out", str(out))
    with tarfile.open(out) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
    artifact = ok("--home", str(indexed), "index", "--out", "-")["artifact"]
    shard = next(name for name in members if name.endswith(".shard"))
    tampered = dict(members)
    tampered[shard] = members[shard][:-1] + bytes([members[shard][-1] ^ 1])  # the block hash table
    cases = {
        "not a tar": b"plain text, not an index",
        "extra member": _tar({**members, "objects/zz/extra.shard": b"x"}),
        "no index.json": _tar({k: v for k, v in members.items() if k != "index.json"}),
        "missing shard": _tar({k: v for k, v in members.items() if k != shard}),
        "tampered shard": _tar(tampered),
        "changed commit": _tar({**members,
                                "index.json": members["index.json"].replace(b'"bm25"', b'"bm26"')}),
        "other artifact": json.dumps({**artifact, "artifactType": "export"}).encode(),
        "cut short": json.dumps({**artifact, "data": artifact["data"][:-8]}).encode(),
        "not JSON": b'{"artifactType": ',
    }
    for what, data in cases.items():
        result = invoke("query", "--term", "fetch", "--index", "-", "--json", stdin=data)
        error = result.envelope["error"]
        assert (result.exit_code, error["code"]) == (3, "INVALID_INPUT"), (what, error)
    missing = invoke("query", "--term", "fetch", "--index", str(tmp_path / "nowhere.tar"), "--json")
    assert missing.exit_code == 3 and "no such file" in missing.envelope["error"]["message"]
    unknown = invoke("query", "--term", "fetch", "--index", str(out), "--indexer", "nope", "--json")
    assert unknown.exit_code == 3 and "unknown indexer 'nope'" in unknown.envelope["error"]["message"]
    needs_json = invoke("--home", str(indexed), "index", "--out", "-")
    assert needs_json.exit_code == 2 and "--json" in needs_json.stderr


def test_index_dir_is_still_a_shards_stage_elsewhere(indexed: Path, tmp_path: Path) -> None:
    """``--index DIR`` (a directory) relocates the shards stage; only a file or ``-`` is an index file."""
    elsewhere = tmp_path / "elsewhere-shards"
    ok("--home", str(indexed), "index", "--index", str(elsewhere), "--reshard")
    assert (elsewhere / "index.json").is_file()
    expected = _query("--home", str(indexed), "query", "--term", "request")
    assert _query("--home", str(indexed), "query", "--term", "request", "--index", str(elsewhere)) == expected
