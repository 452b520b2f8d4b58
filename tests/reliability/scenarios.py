"""The writing commands of the crash matrix, each with a home holding a previous commit.

Each ``prepare`` builds that home with the real CLI (new processes), then changes the inputs so the
command has something to write: new and changed sources, a stage behind the one before it.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from episteme_core.testing.crashmatrix import CrashScenario, episteme

Prepare = Callable[[Path], None]


def run(home: Path, *args: str) -> None:
    proc = episteme(home, args)
    assert proc.returncode == 0, f"episteme {' '.join(args)}: {proc.stderr.decode()[-2000:]}"


def _files(folder: Path, version: int) -> Path:
    """Two local files (the second only from version 2) and the map naming them."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a.txt").write_text(f"Alpha evidence, version {version}.\n\nA second paragraph of evidence.\n")
    entries = [{"sourceUrl": "https://example.org/a", "localPath": "a.txt"}]
    if version > 1:
        (folder / "b.html").write_text("<h1>Beta</h1><p>Beta evidence in a page.</p><p>More.</p>")
        entries.append({"sourceUrl": "https://example.org/b", "localPath": "b.html"})
    map_path = folder / "map.json"
    map_path.write_text(json.dumps(entries))
    return map_path


def staged(upto: str) -> Prepare:
    """A home whose files changed after a full build, its stages then brought up to ``upto``
    (``none``: only the files changed; ``snapshots``, ``documents`` or ``chunks``)."""
    def prepare(home: Path) -> None:
        files = home.parent / "files"
        run(home, "manual-ingest", "--map", str(_files(files, 1)))
        run(home, "ingest")  # extract, chunk, index: a previous commit that answers queries
        map_path = _files(files, 2)
        steps = [["manual-ingest", "--map", str(map_path)], ["extract"], ["chunk"]]
        for command in steps[: {"none": 0, "snapshots": 1, "documents": 2, "chunks": 3}[upto]]:
            run(home, *command)

    return prepare


def books(home: Path) -> None:
    shelf = home.parent / "shelf"
    shelf.mkdir(parents=True, exist_ok=True)
    (shelf / "one.txt").write_text("The first book holds evidence.\n\nAnd a second paragraph.\n")
    run(home, "ingest", "books", str(shelf))
    (shelf / "one.txt").write_text("The first book, revised, holds new evidence.\n")
    (shelf / "two.md").write_text("# Two\n\nThe second book's evidence.\n")


def claude(home: Path) -> None:
    projects = home.parent / "projects"
    folder = projects / "-home-me-proj"
    folder.mkdir(parents=True, exist_ok=True)

    def line(n: int, text: str) -> str:
        return json.dumps({"type": "user", "uuid": f"u{n}", "timestamp": f"2025-01-01T00:00:0{n}Z",
                           "message": {"role": "user", "content": text}}) + "\n"

    (folder / "s1.jsonl").write_text(line(1, "first message with evidence"))
    run(home, "ingest", "claude", "--projects", str(projects))
    with open(folder / "s1.jsonl", "a") as out:
        out.write(line(2, "a later message with more evidence"))
    (folder / "s2.jsonl").write_text(line(3, "another session's evidence"))


def intent(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "intent.md").write_text("# Goals\n\nGather evidence.\n")
    run(home, "ingest", "intent")
    (home / "intent.md").write_text("# Goals\n\nGather evidence.\n\n# Later\n\nMore evidence.\n")


def warc(home: Path) -> None:
    other = home.parent / "other"
    map_path = _files(home.parent / "warc-files", 2)
    run(other, "manual-ingest", "--map", str(map_path))
    run(other, "export", "warc", "--out", str(home.parent / "in.warc.gz"))
    run(home, "manual-ingest", "--map", str(_files(home.parent / "files", 1)))
    run(home, "ingest")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    version = 1


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        pages = {"/a": f"<h1>A</h1><p>Alpha evidence, version {self.server.version}.</p>".encode()}
        if self.server.version > 1:
            pages["/b"] = b"<h1>B</h1><p>Beta evidence.</p>"
        body = pages.get(self.path)
        if body is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        packed = gzip.compress(body)
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(packed)))
        self.end_headers()
        self.wfile.write(packed)


@contextmanager
def web_server() -> Iterator[_Server]:
    server = _Server(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def snapshot(server: _Server, manifest: Path) -> Prepare:
    def prepare(home: Path) -> None:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        server.version = 1
        manifest.write_text(json.dumps([{"url": base + "/a"}]))
        run(home, "snapshot", "--manifest", str(manifest), "--allow-localhost")
        run(home, "ingest")
        server.version = 2
        manifest.write_text(json.dumps([{"url": base + "/a"}, {"url": base + "/b"}]))

    return prepare


SECRET = "hunter2-the-forgotten-secret"


def secret_shelf(home: Path) -> None:
    """A packed home of two books, one with a secret paragraph, the other changed once (two
    versions, so a forget removes a whole history) and a web page (a document of another kind)."""
    shelf = home.parent / "shelf"
    shelf.mkdir(parents=True, exist_ok=True)
    (shelf / "notes.txt").write_text(f"Public evidence of the notes.\n\nThe password is {SECRET}.\n\n"
                                     "More evidence after it.\n")
    (shelf / "other.txt").write_text("Other evidence, first version.\n")
    run(home, "ingest", "books", str(shelf))
    (shelf / "other.txt").write_text(f"Other evidence, second version, quoting {SECRET}.\n")
    run(home, "ingest", "books", str(shelf))
    run(home, "manual-ingest", "--map", str(_files(home.parent / "files", 2)))
    run(home, "ingest")


def nowhere(text: str) -> Callable[[Path], None]:
    """A check that ``text`` is in no file of the home (every byte of every file read)."""
    def check(home: Path) -> None:
        needle = text.encode()
        found = [str(p) for p in home.rglob("*") if p.is_file() and needle in p.read_bytes()]
        assert found == [], f"{text!r} is still in {found}"

    return check


def garbage(home: Path) -> None:
    """A packed home, then what nothing names: a blob, a stage object, a bucket."""
    import hashlib

    books(home)
    run(home, "ingest", "books", str(home.parent / "shelf"))
    data = b"bytes no snapshot names"
    digest = hashlib.sha256(data).hexdigest()
    (home / "blobs" / "sha256" / digest[:2]).mkdir(parents=True, exist_ok=True)
    (home / "blobs" / "sha256" / digest[:2] / digest).write_bytes(data)
    other = b'{"an":"object no index names"}\n'
    digest = hashlib.sha256(other).hexdigest()
    (home / "documents" / "objects" / digest[:2]).mkdir(parents=True, exist_ok=True)
    (home / "documents" / "objects" / digest[:2] / f"{digest}.json").write_bytes(other)
    (home / "chunks" / "buckets").mkdir(parents=True, exist_ok=True)
    (home / "chunks" / "buckets" / f"{'0' * 64}.json").write_bytes(b"{}\n")


def scenarios(workdir: Path) -> dict[str, Callable[[], CrashScenario]]:
    """Name -> scenario factory (the snapshot one needs the server running: see the test)."""
    files_map = str(workdir / "files" / "map.json")
    return {
        "manual-ingest": lambda: CrashScenario("manual-ingest", staged("none"),
                                               ["manual-ingest", "--map", files_map]),
        "extract": lambda: CrashScenario("extract", staged("snapshots"), ["extract"]),
        "chunk": lambda: CrashScenario("chunk", staged("documents"), ["chunk"]),
        "index": lambda: CrashScenario("index", staged("chunks"), ["index"]),
        "pipeline": lambda: CrashScenario("pipeline", staged("none"), ["pipeline", "--map", files_map]),
        "ingest books": lambda: CrashScenario("ingest books", books,
                                              ["ingest", "books", str(workdir / "shelf")]),
        "ingest claude": lambda: CrashScenario("ingest claude", claude,
                                               ["ingest", "claude", "--projects", str(workdir / "projects")]),
        "ingest intent": lambda: CrashScenario("ingest intent", intent, ["ingest", "intent"]),
        "ingest warc": lambda: CrashScenario("ingest warc", warc,
                                             ["ingest", "warc", str(workdir / "in.warc.gz")]),
        "forget source": lambda: CrashScenario(
            "forget source", secret_shelf, ["forget", "--source", "book:shelf/other", "book:shelf/notes#2",
                                            "--reason", "a secret"],
            rewrites_log=True, check=nowhere(SECRET)),
        "forget paragraph": lambda: CrashScenario(
            "forget paragraph", secret_shelf, ["forget", "book:shelf/notes#2"], rewrites_log=True),
        "gc": lambda: CrashScenario("gc", garbage, ["gc"], removes_files=True),
    }
