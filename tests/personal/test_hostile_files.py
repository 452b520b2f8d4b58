"""A user's folders read as what was checked: a file swapped for a FIFO or a symlink after its check,
or grown past the bound, is refused or read as checked; never a hang, a symlink's target or an
unbounded read. Symlinked session folders are not followed; one bad session never fails a run."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from episteme_core.errors import EpistemeError
from episteme_core.personal.books import scan_books
from episteme_core.personal.claude import scan_projects
from episteme_core.personal.intent import read_intent
from episteme_core.personal.safe_open import Refused, read_checked

from .conftest import FIXTURES, HEAVY, SPOTTER, Cli

SECRET = "the secret outside the folder"
FIFO_TEXT = b"what a writer fed the FIFO\n"


def lie_after_check(monkeypatch: pytest.MonkeyPatch, path: Path, swap: Callable[[], None]) -> None:
    """Every ``lstat``/``stat`` of ``path`` answers what it was before (a regular file), and the
    first one (or the first ``os.open`` of it) runs ``swap``: the file changes right after any
    check by path, and before it is opened."""
    real_stat, real_lstat, real_open = os.stat, os.lstat, os.open
    before = real_lstat(path)
    done: list[bool] = []

    def answer(target: object) -> os.stat_result | None:
        if isinstance(target, int) or os.fspath(target) != str(path):  # type: ignore[call-overload]
            return None
        if not done:
            done.append(True)
            swap()
        return before

    def fake_stat(target: object, *args: object, **kwargs: object) -> os.stat_result:
        return answer(target) or real_stat(target, *args, **kwargs)  # type: ignore[arg-type]

    def fake_lstat(target: object, *args: object, **kwargs: object) -> os.stat_result:
        return answer(target) or real_lstat(target, *args, **kwargs)  # type: ignore[arg-type]

    def fake_open(target: object, *args: object, **kwargs: object) -> int:
        dir_fd = kwargs.get("dir_fd")
        if isinstance(dir_fd, int) and isinstance(target, str):  # opened by name in a folder's descriptor
            folder = os.readlink(f"/proc/self/fd/{dir_fd}")
            answer(os.path.join(folder, target))
        else:
            answer(target)
        return real_open(target, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", fake_stat)
    monkeypatch.setattr(os, "open", fake_open)
    monkeypatch.setattr(os, "lstat", fake_lstat)


def swap_for_fifo(path: Path) -> Callable[[], None]:
    def swap() -> None:
        path.unlink()
        os.mkfifo(path)

    return swap


def swap_for_symlink(path: Path, target: Path) -> Callable[[], None]:
    def swap() -> None:
        path.unlink()
        path.symlink_to(target)

    return swap


@contextmanager
def fifo_writer(path: Path, data: bytes = FIFO_TEXT) -> Iterator[None]:
    """Feeds any reader that blocks on the FIFO at ``path`` (so a reader that would hang forever
    reads ``data`` instead, and the test fails on what it stored rather than hanging)."""
    stop = threading.Event()

    def feed() -> None:
        while not stop.wait(0.3):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue  # no FIFO yet, or no reader
            try:
                os.write(fd, data)
            except OSError:
                pass
            finally:
                os.close(fd)
            return

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(5)


def secret_file(tmp_path: Path) -> Path:
    outside = tmp_path / "outside" / "secret.txt"
    outside.parent.mkdir()
    outside.write_text(f"{SECRET}\n\nmore of it\n", encoding="utf-8")
    return outside


def texts(records: list[object]) -> str:
    return "\n".join(p.text for r in records for p in r.paragraphs)  # type: ignore[attr-defined]


# books -------------------------------------------------------------------------------------------


def test_a_book_swapped_for_a_fifo_after_its_check_is_refused_at_once(
        books: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    book = books / "pg2701_moby_dick.txt"
    lie_after_check(monkeypatch, book, swap_for_fifo(book))
    codes: list[str] = []
    with fifo_writer(book):
        scan = scan_books([books], warn=lambda code, message: codes.append(code))
    assert [r.id for r in scan.records] == ["book:library/pg1342_pride_and_prejudice"]
    assert scan.skipped == {"notRegular": 1} and codes == ["BOOK_SKIPPED"]
    assert FIFO_TEXT.decode().strip() not in texts(scan.records)


def test_a_book_swapped_for_a_symlink_after_its_check_is_not_followed(
        tmp_path: Path, books: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    book = books / "pg2701_moby_dick.txt"
    lie_after_check(monkeypatch, book, swap_for_symlink(book, secret_file(tmp_path)))
    scan = scan_books([books])
    assert SECRET not in texts(scan.records)
    assert [r.id for r in scan.records] == ["book:library/pg1342_pride_and_prejudice"]
    assert scan.skipped == {"symlink": 1}


def test_a_book_grown_past_the_bound_after_its_check_is_never_read_past_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "shelf"
    folder.mkdir()
    book = folder / "grows.txt"
    book.write_text("A small book.\n", encoding="utf-8")

    def grow() -> None:
        with open(book, "a", encoding="utf-8") as handle:
            handle.write("\n\nGROWN after the check.\n" * 50_000)  # ~1.2 MB against a 4 KiB bound

    lie_after_check(monkeypatch, book, grow)
    scan = scan_books([folder], max_bytes=4096)
    assert all(r.metadata["bytes"] <= 4096 for r in scan.records)
    assert "GROWN" not in texts(scan.records)
    assert scan.skipped == {"tooLarge": 1}


def test_the_descriptor_reads_no_more_than_the_size_it_was_checked_at(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "grows.txt"
    path.write_bytes(b"checked\n")
    real_fstat = os.fstat

    def fstat_then_grow(fd: int) -> os.stat_result:
        info = real_fstat(fd)
        with open(path, "ab") as handle:
            handle.write(b"grown\n" * 10_000)
        return info

    monkeypatch.setattr(os, "fstat", fstat_then_grow)
    data, info = read_checked(path, 100)
    assert data == b"checked\n" and info.st_size == 8


def test_the_shared_open_refuses_fifos_symlinks_folders_and_large_files(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(secret_file(tmp_path))
    big = tmp_path / "big"
    big.write_bytes(b"x" * 101)
    reasons = {}
    for path in (fifo, link, tmp_path, big, tmp_path / "missing"):
        with pytest.raises(Refused) as refused:
            read_checked(path, 100)
        reasons[path.name] = refused.value.reason
    assert reasons == {"fifo": "notRegular", "link": "symlink", tmp_path.name: "notRegular",
                       "big": "tooLarge", "missing": "missing"}


def test_a_sidecar_swapped_for_a_fifo_is_not_read(books: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sidecar = books / "pg2701_moby_dick.meta.json"
    sidecar.write_text('{"date": "1851"}', encoding="utf-8")
    lie_after_check(monkeypatch, sidecar, swap_for_fifo(sidecar))
    with fifo_writer(sidecar, b'{"date": "1999"}'):
        scan = scan_books([books])
    moby = next(r for r in scan.records if r.id == "book:library/pg2701_moby_dick")
    assert "badSidecar" in moby.metadata and "sidecar" not in moby.metadata
    assert moby.metadata.get("timeFrom") != "sidecar"


# intent ------------------------------------------------------------------------------------------


def test_an_intent_swapped_for_a_fifo_after_its_check_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    intent = tmp_path / "intent.md"
    intent.write_text("# Goal\n\nShip.\n", encoding="utf-8")
    lie_after_check(monkeypatch, intent, swap_for_fifo(intent))
    with fifo_writer(intent), pytest.raises(EpistemeError) as refused:
        read_intent(intent)
    assert refused.value.code == "INVALID_INPUT"


def test_an_intent_swapped_for_a_symlink_after_its_check_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    intent = tmp_path / "intent.md"
    intent.write_text("# Goal\n\nShip.\n", encoding="utf-8")
    lie_after_check(monkeypatch, intent, swap_for_symlink(intent, secret_file(tmp_path)))
    with pytest.raises(EpistemeError) as refused:
        read_intent(intent)
    assert refused.value.code == "INVALID_INPUT"


# claude ------------------------------------------------------------------------------------------


def test_a_session_swapped_for_a_fifo_after_its_check_is_skipped(
        projects: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = projects / "-tmp" / "edge_cases.jsonl"
    lie_after_check(monkeypatch, session, swap_for_fifo(session))
    codes: list[str] = []
    with fifo_writer(session):
        scan = scan_projects(projects, warn=lambda code, message: codes.append(code))
    assert "chat:claude/-tmp/edge_cases" not in {r.id for r in scan.records}
    assert len(scan.records) == 3 and scan.skipped.get("notRegular") == 1
    assert "TRANSCRIPT_SKIPPED" in codes


def test_a_subagent_file_swapped_for_a_symlink_after_its_check_is_not_followed(
        tmp_path: Path, projects: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_text(_line(SECRET), encoding="utf-8")
    agent = projects / SPOTTER / HEAVY / "subagents" / "agent-aac57f5.jsonl"
    lie_after_check(monkeypatch, agent, swap_for_symlink(agent, outside))
    scan = scan_projects(projects)
    assert SECRET not in texts(scan.records)
    heavy = next(r for r in scan.records if r.id == f"chat:claude/{SPOTTER}/{HEAVY}")
    assert heavy.metadata["skipped"].get("symlink") == 1 and heavy.metadata["subagentFiles"] == []


def _line(text: str, uuid: str = "u-secret") -> str:
    return json.dumps({"type": "user", "uuid": uuid, "timestamp": "2024-05-01T10:00:00Z",
                       "message": {"role": "user", "content": text}}) + "\n"


@pytest.mark.parametrize("linked", ["session", "subagents"])
def test_a_symlinked_session_folder_is_skipped_and_its_subagents_never_found(
        tmp_path: Path, projects: Path, cli: Cli, linked: str) -> None:
    """The docs say symlinked folders are skipped: a session folder (or its ``subagents``) that is
    a symlink to a folder outside ``--projects`` is not followed, with a warning naming it."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "subagents").mkdir(parents=True)
    (elsewhere / "subagents" / "agent-x.jsonl").write_text(_line("zanzibar quokka outside"),
                                                            encoding="utf-8")
    short = projects / "-tmp" / "edge_cases"
    if linked == "session":
        short.symlink_to(elsewhere)
    else:
        short.mkdir()
        (short / "subagents").symlink_to(elsewhere / "subagents")
    ingested = cli("ingest", "claude", "--projects", str(projects), "--json")
    assert ingested.exit_code == 0, ingested.stderr
    warnings = [w for w in ingested.envelope["warnings"] if w["code"] == "TRANSCRIPT_SKIPPED"]
    named = short if linked == "session" else short / "subagents"
    assert [w["message"] for w in warnings] == [f"{named}: a symbolic link, skipped"]
    found = cli("query", "--term", "zanzibar quokka", "--json").envelope["data"]
    assert found["results"] == []
    shown = cli("show", "chat:claude/-tmp/edge_cases", "--json").envelope["data"]["record"]
    assert shown["metadata"]["subagentFiles"] == [] and shown["metadata"]["skipped"]["symlink"] == 1


# one bad session never fails a run ---------------------------------------------------------------


@pytest.mark.parametrize("kind", ["long", "notUtf8"])
def test_a_session_whose_id_is_too_long_is_skipped_and_the_rest_stored(
        tmp_path: Path, projects: Path, cli: Cli, kind: str) -> None:
    """A project of 100 and a session of 249 bytes that are not UTF-8 (each written ``%XX``), or
    names of ``%`` (``%25``), make an id past 1,024 characters: that session is skipped, named."""
    if kind == "long":
        project, session = "%" * 150, "%" * 240
    else:
        project, session = os.fsdecode(b"\xe9" * 100), os.fsdecode(b"\xe9" * 249)
    folder = projects / project
    folder.mkdir()
    shutil.copy(FIXTURES / "claude" / "spotter__short.jsonl", folder / f"{session}.jsonl")
    ingested = cli("ingest", "claude", "--projects", str(projects), "--no-pack", "--json")
    assert ingested.exit_code == 0, ingested.stdout
    data = ingested.envelope["data"]
    assert data["captured"] == 4 and data["sessionsSkipped"] == 1
    skipped = [w["message"] for w in ingested.envelope["warnings"] if w["code"] == "TRANSCRIPT_SKIPPED"]
    assert len(skipped) == 1 and "longer than 1024 characters" in skipped[0]
    assert os.fsencode(folder).decode("utf-8", "backslashreplace") in skipped[0]


# a folder on the way swapped for a symlink -----------------------------------------------------


def _swap_folder_for_link(folder: Path, outside: Path) -> None:
    """``folder`` becomes a symbolic link to ``outside``, which holds files of the same names."""
    shutil.copytree(folder, outside)
    for path in outside.rglob("*"):
        if path.is_file():
            path.write_text("secret from outside the folder\n", encoding="utf-8")
    shutil.rmtree(folder)
    folder.symlink_to(outside, target_is_directory=True)


def test_a_book_folder_swapped_for_a_symlink_after_the_walk_is_not_followed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import episteme_core.personal.books as books_module

    shelf = tmp_path / "shelf"
    (shelf / "part").mkdir(parents=True)
    (shelf / "part" / "inner.txt").write_text("Inside the shelf.\n", encoding="utf-8")
    (shelf / "top.txt").write_text("Top of the shelf.\n", encoding="utf-8")
    real_walk = books_module._walk

    def walk_then_swap(directory: Path, scan: object, warn: object) -> list[Path]:
        found = real_walk(directory, scan, warn)  # type: ignore[arg-type]
        _swap_folder_for_link(shelf / "part", tmp_path / "outside")
        return found

    monkeypatch.setattr(books_module, "_walk", walk_then_swap)
    warnings: list[str] = []
    scan = scan_books([shelf], warn=lambda code, message: warnings.append(message))
    texts = [p.text for r in scan.records for p in r.paragraphs]
    assert texts == ["Top of the shelf."] and scan.skipped == {"symlink": 1}
    assert any("inner.txt: a symbolic link (or a folder on its way is), skipped" in w for w in warnings)


def test_a_project_folder_swapped_for_a_symlink_after_the_listing_is_not_followed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import episteme_core.personal.claude as claude_module

    projects = tmp_path / "projects"
    project = projects / SPOTTER
    project.mkdir(parents=True)
    shutil.copy(FIXTURES / "claude" / "spotter__tool_heavy.jsonl", project / f"{HEAVY}.jsonl")
    real_read = claude_module.read_session

    def swap_then_read(project_dir: Path, session_file: Path, **options: object) -> object:
        if not project_dir.is_symlink():
            _swap_folder_for_link(project_dir, tmp_path / "outside")
        return real_read(project_dir, session_file, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(claude_module, "read_session", swap_then_read)
    scan = scan_projects(projects)
    assert scan.records == [] and all("secret" not in str(r) for r in scan.records)
    assert scan.skipped.get("symlink") == 1
