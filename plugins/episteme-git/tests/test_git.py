"""episteme-git against real repositories: records, merges, odd messages, incremental, many commits."""

from __future__ import annotations

import json
from pathlib import Path

from episteme_core.testing import check_component, invoke, read_documents, validate

from .conftest import GitRun, make_git


def _commit(repo: Path, git: GitRun, name: str, message: bytes, content: str = "x") -> str:
    (repo / name).write_text(content, encoding="utf-8")
    git("add", name)
    git("commit", "-q", "--allow-empty-message", "-F", "-", stdin=message)
    return git("rev-parse", "HEAD").decode().strip()


def _show(home: Path, ref: str) -> dict:  # type: ignore[type-arg]
    result = invoke("show", ref, "--stale-ok", "--json", "--home", str(home))
    assert result.exit_code == 0, result.stderr
    return result.envelope["data"]  # type: ignore[no-any-return]


def test_one_record_per_commit_with_subject_body_and_paths(repo: tuple[Path, GitRun], home: Path) -> None:
    path, git = repo
    sha = _commit(path, git, "a.txt", b"Add the parser\n\nIt reads tokens.\nLazily.\n\nSecond paragraph.\n")
    result = invoke("ingest", "git", str(path), "--no-pack", "--stat", "--json", "--home", str(home))
    assert result.exit_code == 0, result.stderr
    assert result.envelope["data"]["records"] == [f"git:proj@{sha}"]
    record = _show(home, f"git:proj@{sha}")["record"]
    validate(record, "record")
    assert record["time"] == "2024-05-01T08:00:00Z"  # the author time, in UTC
    assert record["metadata"]["committerTime"] == "2024-05-02T08:00:00Z"
    assert [(p["kind"], p["text"]) for p in record["paragraphs"]] == [
        ("subject", "Add the parser"),
        ("body", "It reads tokens.\nLazily."),
        ("body", "Second paragraph."),
        ("diff_stat", "a.txt | +1 -0"),
    ]
    assert record["metadata"]["changedPaths"] == ["a.txt"] and record["metadata"]["parents"] == []
    assert record["title"] == "Add the parser"
    assert _show(home, f"git:proj@{sha}#2")["paragraph"]["text"] == "It reads tokens.\nLazily."


def test_merges_empty_and_non_utf8_messages(repo: tuple[Path, GitRun], home: Path) -> None:
    path, git = repo
    _commit(path, git, "a.txt", b"base\n")
    git("checkout", "-q", "-b", "side")
    _commit(path, git, "b.txt", b"side work\n")
    git("checkout", "-q", "main")
    _commit(path, git, "c.txt", b"main work\n")
    git("merge", "-q", "--no-edit", "side")
    merge = git("rev-parse", "HEAD").decode().strip()
    empty = _commit(path, git, "d.txt", b"")
    git("config", "i18n.commitEncoding", "ISO-8859-1")
    latin = _commit(path, git, "e.txt", "Café crème\n".encode("latin-1"))
    git("config", "--unset", "i18n.commitEncoding")
    # git itself may transcode a message it finds invalid; write the raw object to keep the bytes
    head = git("rev-parse", "HEAD").decode().strip()
    tree = git("rev-parse", "HEAD^{tree}").decode().strip()
    body = (f"tree {tree}\nparent {head}\nauthor A <a@e.org> 1714550400 +0000\n"
            f"committer A <a@e.org> 1714550400 +0000\n\n").encode() + b"Bad \x92 quote\n"
    raw = git("hash-object", "-t", "commit", "-w", "--stdin", stdin=body).decode().strip()
    git("update-ref", "refs/heads/main", raw)
    result = invoke("ingest", "git", str(path), "--no-pack", "--json", "--home", str(home))
    assert result.exit_code == 0, result.stderr
    assert result.envelope["data"]["captured"] == 7
    merged = _show(home, f"git:proj@{merge}")["record"]
    assert merged["metadata"]["merge"] is True and len(merged["metadata"]["parents"]) == 2
    assert merged["metadata"]["changedPaths"] == ["b.txt"]  # against the first parent only
    assert merged["paragraphs"][0]["text"] == "Merge branch 'side'"
    blank = _show(home, f"git:proj@{empty}")["record"]
    assert blank["paragraphs"] == [] and blank["metadata"]["emptyMessage"] is True
    latin1 = _show(home, f"git:proj@{latin}")["record"]
    assert latin1["paragraphs"][0]["text"] == "Café crème"
    assert latin1["metadata"]["messageEncoding"] == "iso-8859-1"
    cp = _show(home, f"git:proj@{raw}")["record"]
    assert cp["paragraphs"][0]["text"] == "Bad \u2019 quote"
    assert cp["metadata"]["messageEncoding"] == "windows-1252"


def test_incremental_only_new_commits(repo: tuple[Path, GitRun], home: Path) -> None:
    path, git = repo
    _commit(path, git, "a.txt", b"one\n")
    args = ("ingest", "git", str(path), "--no-pack", "--json", "--home", str(home))
    assert invoke(*args).envelope["data"]["captured"] == 1
    log = (home / "log.jsonl").read_bytes()
    again = invoke(*args).envelope["data"]
    assert again["captured"] == 0 and again["repos"] == {"proj": {"commits": 1, "new": 0, "tooLarge": 0}}
    assert (home / "log.jsonl").read_bytes() == log
    new = _commit(path, git, "b.txt", b"two\n")
    third = invoke(*args).envelope["data"]
    assert third["records"] == [f"git:proj@{new}"] and third["repos"]["proj"]["new"] == 1


def test_thousands_of_commits(tmp_path: Path, home: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Read and stored in batches (here of 300: four), every commit once, the counts per repository
    reported after the last batch."""
    import episteme_git.source

    monkeypatch.setattr(episteme_git.source, "COMMIT_BATCH", 300)
    path = tmp_path / "big"
    path.mkdir()
    git = make_git(path)
    git("init", "-q", "-b", "main")
    count = 1000
    stream = []
    for i in range(1, count + 1):
        message = f"commit {i}\n\nbody of {i}\n".encode()
        data = f"{i}\n".encode()
        stream.append(
            b"commit refs/heads/main\n"
            + f"mark :{i}\nauthor A <a@e.org> {1_700_000_000 + i} +0000\n"
              f"committer A <a@e.org> {1_700_000_000 + i} +0000\n".encode()
            + f"data {len(message)}\n".encode() + message
            + (f"from :{i - 1}\n".encode() if i > 1 else b"")
            + f"M 644 inline f{i % 7}.txt\ndata {len(data)}\n".encode() + data + b"\n"
        )
    git("fast-import", "--quiet", stdin=b"".join(stream))
    git("checkout", "-q", "main")
    result = invoke("ingest", "git", str(path), "--name", "big", "--no-pack", "--json", "--home", str(home))
    assert result.exit_code == 0, result.stderr
    assert result.envelope["data"]["captured"] == count
    assert result.envelope["data"]["repos"] == {"big": {"commits": count, "new": count, "tooLarge": 0}}
    sources = invoke("sources", "--json", "--home", str(home)).envelope["data"]["sources"]
    row = next(r for r in sources if r["source"] == "git")
    assert row["records"] == count and row["paragraphs"] == 2 * count
    assert row["timeSpan"] == {"from": "2023-11-14T22:13:21Z", "to": "2023-11-14T22:30:00Z"}


def test_not_a_repository_and_bad_names(tmp_path: Path, home: Path, repo: tuple[Path, GitRun]) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    result = invoke("ingest", "git", str(plain), "--json", "--home", str(home))
    assert result.exit_code == 3 and result.envelope["error"]["code"] == "INVALID_INPUT"
    assert "not a git repository" in result.envelope["error"]["message"]
    missing = invoke("ingest", "git", str(tmp_path / "absent"), "--json", "--home", str(home))
    assert missing.exit_code == 3
    path, _ = repo
    bad = invoke("ingest", "git", str(path), "--name", "../x", "--json", "--home", str(home))
    assert bad.exit_code == 3
    assert not (home / "snapshots").exists()


def test_an_empty_repository_has_no_records(repo: tuple[Path, GitRun], home: Path) -> None:
    path, _ = repo
    result = invoke("ingest", "git", str(path), "--no-pack", "--json", "--home", str(home))
    assert result.exit_code == 0 and result.envelope["data"]["found"] == 0


def test_all_reads_git_repos_from_config(repo: tuple[Path, GitRun], home: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for name in ("HONCHO_BASE_URL", "HONCHO_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    path, git = repo
    sha = _commit(path, git, "a.txt", b"configured\n")
    home.mkdir()
    (home / "config.json").write_text(json.dumps({
        "git_repos": [{"path": str(path), "name": "mine"}], "claude_projects": str(home / "none"),
    }))
    result = invoke("ingest", "--all", "--json", "--home", str(home))
    assert result.exit_code == 0, result.stderr
    rows = {row["source"]: row for row in result.envelope["data"]["sources"]}
    assert rows["git"]["records"] == [f"git:mine@{sha}"]
    assert result.envelope["data"]["pack"]["status"] == "ok"
    shown = invoke("show", f"git:mine@{sha}#1", "--json", "--home", str(home))
    assert shown.exit_code == 0 and shown.envelope["data"]["paragraph"]["text"] == "configured"


def test_the_source_keeps_the_source_contract() -> None:
    from episteme_git.source import GitSource

    assert check_component(GitSource()) == "source"


def test_commits_extract_as_commit_message_blocks_and_reshard_takes_one_lock(
    repo: tuple[Path, GitRun], home: Path
) -> None:
    """The source declares its block kind; ``ingest --reshard git`` runs under the command's own lock."""
    path, git = repo
    _commit(path, git, "a.txt", b"Add the parser\n\nIt reads tokens.\n")
    result = invoke("ingest", "--reshard", "git", str(path), "--json", "--home", str(home))
    assert result.exit_code == 0, result.stderr
    assert result.envelope["data"]["pack"]["status"] == "ok"
    [document] = read_documents(home)
    assert {block.kind for block in document.blocks()} == {"commit_message"}
    hits = invoke("query", "--term", "parser", "--json", "--home", str(home))
    assert hits.exit_code == 0 and hits.envelope["data"]["results"], hits.stderr


def test_odd_commits_are_read_with_a_warning_and_never_fail_the_run(repo: tuple[Path, GitRun],
                                                                     home: Path) -> None:
    """Objects git itself accepts (``hash-object --literally``) but no porcelain writes: a Latin-1
    author, a message in no declared encoding, author lines without email or time, a stray
    non-ASCII ``parent`` line below the committer."""
    path, git = repo
    parent = _commit(path, git, "a.txt", b"base\n")
    tree = git("rev-parse", "HEAD^{tree}").decode().strip()
    bodies = [
        b"author Jos\xe9 <jose@e.org> 1714550400 +0200\ncommitter Jos\xe9 <jose@e.org> 1714550400 +0200\n"
        b"encoding ISO-8859-1\n\nCaf\xe9 cr\xe8me\n",
        b"author A <a@e.org> 1714550400 +0000\ncommitter A <a@e.org> 1714550400 +0000\n\nBad \x92 quote\n",
        b"author nobody\ncommitter <> \n\nWho wrote this?\n",
        b"author A <a@e.org> 1714550400 +0000\ncommitter A <a@e.org> 1714550400 +0000\nparent \xff\xfe\n"
        b"\nA stray parent line\n",
    ]
    shas = []
    for body in bodies:
        raw = f"tree {tree}\nparent {parent}\n".encode() + body
        parent = git("hash-object", "--literally", "-t", "commit", "-w", "--stdin", stdin=raw).decode()
        parent = parent.strip()
        shas.append(parent)
    git("update-ref", "refs/heads/main", parent)
    result = invoke("ingest", "git", str(path), "--no-pack", "--json", "--home", str(home))
    assert result.exit_code == 0, result.stderr
    assert result.envelope["data"]["captured"] == 5
    warnings = {w["code"]: w for w in result.envelope["warnings"]}
    assert warnings["GIT_MESSAGE_NOT_UTF8"]["commits"] == [shas[1]]
    assert warnings["GIT_ODD_PERSON"]["commits"] == [shas[2]]
    latin = _show(home, f"git:proj@{shas[0]}")["record"]
    assert latin["metadata"]["author"]["name"] == "José"  # in the commit's declared encoding
    assert latin["paragraphs"][0]["text"] == "Café crème"
    odd = _show(home, f"git:proj@{shas[2]}")["record"]
    assert odd["metadata"]["author"] == {"name": "nobody", "time": None}
    assert odd["paragraphs"][0]["text"] == "Who wrote this?"
    stray = _show(home, f"git:proj@{shas[3]}")["record"]
    assert stray["metadata"]["parents"] == [shas[2]]  # the parents git reads, right after the tree


def test_a_commit_past_max_commit_bytes_is_skipped_unread_with_a_warning(
    repo: tuple[Path, GitRun], home: Path
) -> None:
    """A commit object at ``--max-commit-bytes`` is read; one byte past it is skipped with
    ``GIT_COMMIT_TOO_LARGE`` and the rest of the history is stored (a hostile repository's huge
    message is never held)."""
    path, git = repo
    small = _commit(path, git, "a.txt", b"small\n")
    big = _commit(path, git, "b.txt", b"big " + b"x" * 5000 + b"\n")
    after = _commit(path, git, "c.txt", b"after\n")
    size = int(git("cat-file", "-s", big).decode())

    def ingest(bound: int, where: Path) -> dict:  # type: ignore[type-arg]
        result = invoke("ingest", "git", str(path), "--max-commit-bytes", str(bound), "--no-pack", "--json",
                        "--home", str(where))
        assert result.exit_code == 0, result.stderr
        return result.envelope  # type: ignore[no-any-return]

    at = ingest(size, home)
    assert at["data"]["captured"] == 3 and at["data"]["repos"]["proj"]["tooLarge"] == 0
    past = ingest(size - 1, home.parent / "home-past")
    assert past["data"]["captured"] == 2 and past["data"]["repos"]["proj"]["tooLarge"] == 1
    warning = next(w for w in past["warnings"] if w["code"] == "GIT_COMMIT_TOO_LARGE")
    assert big[:12] in warning["message"]
    assert _show(home.parent / "home-past", f"git:proj@{small}#1")
    assert _show(home.parent / "home-past", f"git:proj@{after}#1")
    missing = invoke("show", f"git:proj@{big}#1", "--stale-ok", "--json",
                     "--home", str(home.parent / "home-past"))
    assert missing.exit_code != 0
    for bad in ("0", str(256 * 1024 * 1024 + 1)):
        refused = invoke("ingest", "git", str(path), "--max-commit-bytes", bad, "--json", "--home", str(home))
        assert refused.exit_code != 0 and refused.envelope["error"]["code"] == "INVALID_USAGE"


def test_batches_are_bounded_by_the_bytes_of_their_commits() -> None:
    from episteme_git.source import batches

    shas = [f"{i:040x}" for i in range(7)]
    sizes = {sha: size for sha, size in zip(shas, [10, 10, 30, 5, 5, 100, 1], strict=True)}
    assert list(batches(shas, sizes, count=3, limit=25)) == [
        shas[0:2], shas[2:3], shas[3:5], shas[5:6], shas[6:7]]
    assert list(batches(shas, sizes, count=2, limit=1000)) == [shas[0:2], shas[2:4], shas[4:6], shas[6:7]]
    assert list(batches(shas, {}, count=4, limit=1)) == [shas[0:4], shas[4:7]]
    assert list(batches([], sizes, count=3, limit=25)) == []
