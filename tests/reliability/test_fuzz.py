"""Fuzz every parser of outside input: each input ends in a result or a clean error code, never a
crash, and a result can always be stored (canonical JSON) and shown (an envelope).

Manifests, maps, config.json, strict JSON, HTML, XML, PDF (mutations of the real PDFs in
tests/fixtures), text in any encoding, Claude transcripts, books, WARC files, and the HTTP reader's
replies (a real loopback server answering with the fuzzed bytes). Git log output and Honcho pages
are fuzzed in their plugins' suites.
"""

from __future__ import annotations

import io
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from episteme_core.capture.manifest import parse_manifest, parse_map
from episteme_core.errors import ERROR_CODES, EpistemeError
from episteme_core.extract.html import HtmlExtractor
from episteme_core.extract.pdf import PdfExtractor
from episteme_core.extract.text import TextExtractor
from episteme_core.extract.xml import XmlExtractor
from episteme_core.records.canonical import canonical_bytes, loads_strict
from episteme_core.testing import validate
from episteme_core.testing.fuzzing import count_input as ran
from episteme_core.testing.fuzzing import fuzz_settings as fuzz

from .extracting import request

FIXTURES = Path(__file__).parent.parent / "fixtures"
CLEAN = set(ERROR_CODES) - {"INTERNAL_ERROR"}

# Text that a parser must survive: lone surrogates, NUL, controls, astral characters, long runs.
NASTY = st.lists(st.sampled_from(
    ["a", " ", "\n", "\x00", "\x1b", "\ud83d", "\udc80", "\U0001f600", "\u2029", "#", "%", "/", "..",
     "\\", "é", "\ufeff", "<", ">", "&", '"', "'", "9" * 50]), max_size=30).map("".join)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | NASTY,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(NASTY | st.sampled_from(
        ["url", "sourceUrl", "localPath", "contentType", "family", "authority", "extractor"]),
        children, max_size=5),
    max_leaves=15,
)
HUGE_NUMBERS = st.sampled_from([b"9" * 4301, b"-" + b"9" * 5000, b"1e400", b"-1e999", b"1" * 100_000])


def _clean(error: EpistemeError) -> None:
    assert error.code in CLEAN, f"{error.code}: {error.message}"


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=True).encode()  # \\ud83d escapes survive as lone surrogates


# JSON inputs -----------------------------------------------------------------------------------


@fuzz(200)
@given(data=st.one_of(st.binary(max_size=200), JSONISH.map(_json_bytes),
                      st.tuples(st.sampled_from([b"[", b'{"a":', b"[[[["]), HUGE_NUMBERS).map(b"".join)))
def test_strict_json(data: bytes) -> None:
    ran("strict JSON")
    try:
        value = loads_strict(data, source="fuzz")
    except EpistemeError as error:
        _clean(error)
        return
    canonical_bytes(value)  # anything strict JSON accepts can be written back


@fuzz(200)
@given(entries=st.lists(JSONISH, max_size=4) | JSONISH)
def test_manifests_and_maps(entries: Any) -> None:
    ran("manifest and map")
    data = _json_bytes(entries)
    import attrs

    for parse in (parse_manifest, parse_map):
        try:
            for entry in parse(data, source="fuzz"):
                canonical_bytes(attrs.asdict(entry))  # what was accepted can be stored
        except EpistemeError as error:
            _clean(error)


URLS = st.one_of(
    st.builds(lambda host, path: f"http://{host}/{path}",
              st.sampled_from(["0177.0.0.1", "127.1", "0x7f.1", "[::1]", "[::ffff:7f00:1]", "a..b",
                               "xn--", "example.org", "EXAMPLE.org.", "ex\u00e4mple.org", "1.2.3.4.5",
                               "a" * 64 + ".org", "\u200b.org", "h%41st", "host:99999", "host:-1",
                               "user:pw@host", "[1:2:3]"]), NASTY),
    NASTY.map(lambda text: "https://example.org/" + text),
    st.text(max_size=40),
)


@fuzz(300)
@given(url=URLS)
def test_urls_of_a_manifest(url: str) -> None:
    ran("URL")
    try:
        parse_manifest(_json_bytes([{"url": url}]), source="fuzz")
    except EpistemeError as error:
        _clean(error)


@fuzz(40)
@given(body=st.one_of(st.binary(max_size=100), JSONISH.map(_json_bytes), HUGE_NUMBERS))
def test_config_json(tmp_path_factory: pytest.TempPathFactory, body: bytes) -> None:
    from episteme_core.store.home import Home

    ran("config.json")
    root = tmp_path_factory.mktemp("home")
    (root / "config.json").write_bytes(body)
    try:
        canonical_bytes(Home(root).config())
    except EpistemeError as error:
        _clean(error)


# documents -------------------------------------------------------------------------------------

HTML = st.lists(st.sampled_from([
    "<p>", "</p>", "<div>", "</div>", "<section>", "<h1>", "</h1>", "<h2 id=x>", "<table><tr><td>",
    "<pre>", "</pre>", "<dl><dt>", "<dd>", "<ul><li>", "<script>", "</script>", "<!--", "-->",
    "<![CDATA[", "&amp;", "&#x0;", "&#xd83d;", "&nbsp;", "\x00", "\r\n", "text ", "\ufeff",
    "<meta charset=utf-16>", "<svg><p>", "<math>", "<template>", "<noscript>", "<a name=n>", "<br>",
]), max_size=60).map("".join)


@fuzz(200)
@given(markup=HTML, charset=st.sampled_from([None, "utf-8", "windows-1252", "utf-16", "nope", "latin-1"]))
def test_html(markup: str, charset: str | None) -> None:
    ran("HTML")
    req = request(markup.encode("utf-8", "surrogatepass"), "text/html")
    req = type(req)(record=_with_charset(req.record, charset), content=req.content, family=req.family,
                    options={"maxElements": 50})
    document = HtmlExtractor().extract(req)
    validate(document.to_json(), "document")


XML = st.lists(st.sampled_from([
    "<?xml version='1.0'?>", "<r>", "</r>", "<a id='x'>", "</a>", "<title>", "</title>", "text",
    "<!DOCTYPE r [<!ENTITY e 'v'>]>", "&e;", "&undefined;", "<!ENTITY b '&e;&e;'>", "&#0;", "\x00",
    "<![CDATA[x]]>", "<!-- c -->", "<?pi x?>", "&#xd800;", "<b/>", "\ufeff", "<x:y xmlns:x='u'>",
]), max_size=40).map("".join)


@fuzz(200)
@given(markup=XML)
def test_xml(markup: str) -> None:
    ran("XML")
    document = XmlExtractor().extract(request(markup.encode("utf-8", "surrogatepass"), "application/xml",
                                              maxElements=50))
    validate(document.to_json(), "document")


CHARSETS = st.sampled_from([None, "utf-8", "utf-16", "utf-16-le", "utf-32", "windows-1252", "shift_jis",
                            "iso-2022-jp", "gb18030", "koi8-r", "x-unknown", "base64", "rot13", "utf-7"])


@fuzz(300)
@given(data=st.binary(max_size=300), charset=CHARSETS,
       content_type=st.sampled_from(["text/plain", "text/markdown"]))
def test_text_in_any_encoding(data: bytes, charset: str | None, content_type: str) -> None:
    ran("text encodings")
    req = request(data, content_type)
    req = type(req)(record=_with_charset(req.record, charset), content=data, family=req.family, options={})
    document = TextExtractor().extract(req)
    validate(document.to_json(), "document")


def _with_charset(record: Any, charset: str | None) -> Any:
    import attrs

    return attrs.evolve(record, charset=charset)


def _pdfs() -> list[bytes]:
    return [p.read_bytes() for p in sorted((FIXTURES / "extract").glob("*.pdf"))
            if 0 < p.stat().st_size < 80_000]


@st.composite
def mutated_pdfs(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(_pdfs())))
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["flip", "cut", "insert", "delete", "splice"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[at] ^= draw(st.integers(1, 255))
        elif kind == "cut":
            del data[at:]
        elif kind == "insert":
            data[at:at] = draw(st.sampled_from([b"/FlateDecode", b" 0 R", b"<<", b">>", b"stream\n",
                                                b"endobj", b"9" * 30, b"\x00" * 8, b"(", b"/Length 99999"]))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 64))]
        else:
            data[at:at] = data[draw(st.integers(0, max(0, len(data) - 1))):][:draw(st.integers(1, 200))]
    return bytes(data)


@fuzz(25)
@given(data=mutated_pdfs())
def test_pdf_bytes_mutated_from_real_pdfs(data: bytes) -> None:
    ran("PDF")
    document = PdfExtractor().extract(request(data, "application/pdf", timeLimitS=20))
    validate(document.to_json(), "document")


# personal records ------------------------------------------------------------------------------

TRANSCRIPT_LINE = st.one_of(
    st.binary(max_size=60),
    st.fixed_dictionaries({
        "type": st.sampled_from(["user", "assistant", "progress", "summary"]),
        "uuid": NASTY, "timestamp": st.sampled_from(["2025-01-01T00:00:00Z", "nope", "9" * 30]),
        "message": st.fixed_dictionaries({"role": NASTY, "content": NASTY | st.lists(st.fixed_dictionaries({
            "type": st.sampled_from(["text", "thinking", "tool_use", "tool_result", "image"]),
            "text": NASTY, "thinking": NASTY, "name": NASTY, "input": JSONISH, "content": NASTY,
        }), max_size=3)}),
    }).map(_json_bytes),
)


def _fs_name(raw: bytes, default: bytes) -> bytes:
    return raw.replace(b"/", b"_").replace(b"\x00", b"_").lstrip(b".") or default


@fuzz(200)
@given(lines=st.lists(TRANSCRIPT_LINE, max_size=8), project=st.binary(min_size=1, max_size=10),
       session=st.binary(min_size=1, max_size=10))
def test_claude_transcripts(tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], project: bytes,
                            session: bytes) -> None:
    import os

    from episteme_core.personal.claude import scan_projects

    ran("Claude transcripts")
    root = tmp_path_factory.mktemp("projects")
    folder = os.path.join(os.fsencode(root), _fs_name(project, b"p"))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, _fs_name(session, b"s") + b".jsonl"), "wb") as out:
        out.write(b"\n".join(lines))
    warnings: list[str] = []
    scan = scan_projects(root, warn=lambda code, message: warnings.append(message))
    for record in scan.records:
        record.to_bytes()
    canonical_bytes(warnings)


@fuzz(150)
@given(data=st.binary(max_size=400), name=st.binary(min_size=1, max_size=12),
       suffix=st.sampled_from([".txt", ".md"]))
def test_books(tmp_path_factory: pytest.TempPathFactory, data: bytes, name: bytes, suffix: str) -> None:
    import os

    from episteme_core.personal.books import scan_books

    ran("books")
    shelf = tmp_path_factory.mktemp("shelf")
    with open(os.path.join(os.fsencode(shelf), _fs_name(name, b"b") + suffix.encode()), "wb") as out:
        out.write(data)
    warnings: list[str] = []
    scan = scan_books([shelf], warn=lambda code, message: warnings.append(message))
    for record in scan.records:
        record.to_bytes()
    canonical_bytes(warnings)


# WARC ----------------------------------------------------------------------------------------------


def _warc() -> bytes:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    out = io.BytesIO()
    writer = WARCWriter(out, gzip=False)
    for n, body in enumerate([b"<p>one</p>", b"two", b""]):
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(f"https://example.org/{n}", "response",
                                                      payload=io.BytesIO(body), length=len(body),
                                                      http_headers=http))
    return out.getvalue()


@st.composite
def mutated_warcs(draw: st.DrawFn) -> bytes:
    data = bytearray(_warc())
    for _ in range(draw(st.integers(0, 5))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["flip", "cut", "insert", "delete"]))
        if kind == "flip" and at < len(data):
            data[at] ^= draw(st.integers(1, 255))
        elif kind == "cut":
            del data[at:]
        elif kind == "insert":
            data[at:at] = draw(st.sampled_from([b"\r\n", b"Content-Length: 99999999\r\n", b"WARC/1.0\r\n",
                                                b"WARC-Type: response\r\n", b"\x1f\x8b", b"9" * 40]))
        else:
            del data[at:at + draw(st.integers(1, 30))]
    if draw(st.booleans()):
        import gzip

        return gzip.compress(bytes(data))
    return bytes(data)


@fuzz(100)
@given(data=mutated_warcs())
def test_warc_files(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    from episteme_core.capture.warc import import_warc
    from episteme_core.store.home import Home

    ran("WARC")
    folder = tmp_path_factory.mktemp("warc")
    path = folder / "in.warc"
    path.write_bytes(data)
    try:
        report = import_warc(Home(folder / "home"), path, max_bytes=1 << 20)
    except EpistemeError as error:
        _clean(error)
        return
    canonical_bytes(report.data())


# the HTTP reader's replies -------------------------------------------------------------------------


class _RawServer:
    """Answers each connection on 127.0.0.1 with ``reply`` (raw bytes), then closes it."""

    def __init__(self) -> None:
        self.reply = b""
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    conn.recv(65536)
                    conn.sendall(self.reply)
                    conn.shutdown(socket.SHUT_WR)
                except OSError:
                    pass

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def raw_server() -> Iterator[_RawServer]:
    server = _RawServer()
    yield server
    server.close()


@st.composite
def http_replies(draw: st.DrawFn) -> bytes:
    import gzip

    status = draw(st.sampled_from([b"200 OK", b"304 Not Modified", b"302 Found", b"503 Busy", b"999 X",
                                   b"200", b"abc", b"204 No Content"]))
    body = draw(st.binary(max_size=200))
    encoding = draw(st.sampled_from([None, b"gzip", b"deflate", b"br", b"gzip, gzip", b"identity"]))
    if encoding == b"gzip" and draw(st.booleans()):
        body = gzip.compress(body)
        if draw(st.booleans()):
            body = body[: draw(st.integers(0, len(body)))]  # cut short in transit
    headers = [b"Content-Type: " + draw(st.sampled_from([b"text/html", b"text/plain; charset=nope",
                                                         b"text/html; charset=utf-16", b";;", b""]))]
    if encoding:
        headers.append(b"Content-Encoding: " + encoding)
    length = draw(st.sampled_from(["right", "short", "long", "none", "junk", "chunked"]))
    if length == "right":
        headers.append(b"Content-Length: %d" % len(body))
    elif length == "short":
        headers.append(b"Content-Length: %d" % max(0, len(body) - 3))
    elif length == "long":
        headers.append(b"Content-Length: %d" % (len(body) + 10))
    elif length == "junk":
        headers.append(b"Content-Length: 1e9")
    elif length == "chunked":
        headers.append(b"Transfer-Encoding: chunked")
        body = b"%x\r\n" % len(body) + body + (b"\r\n0\r\n\r\n" if draw(st.booleans()) else b"")
    if draw(st.booleans()):
        headers.append(b"Location: " + draw(st.sampled_from([b"/x", b"file:///etc/passwd", b"http://0177.0.0.1/",
                                                             b"\xff\xfe", b"//evil", b""])))
    extra = draw(st.sampled_from([b"", b"Retry-After: 99999999999\r\n", b"ETag: \x00\r\n", b"X: \xff\r\n"]))
    head = b"HTTP/1.1 " + status + b"\r\n" + b"\r\n".join(headers) + b"\r\n" + extra
    return head + b"Connection: close\r\n\r\n" + body


@fuzz(100)
@given(reply=http_replies())
def test_http_replies(raw_server: _RawServer, reply: bytes) -> None:
    from episteme_core.capture.http import Fetcher, FetchSettings
    from episteme_core.capture.netguard import NetPolicy

    ran("HTTP replies")
    raw_server.reply = reply
    settings = FetchSettings(timeout_s=3, read_timeout_s=2, max_bytes=4096, retries=0,
                             policy=NetPolicy(allow_localhost=True), max_redirects=2)
    started = time.monotonic()
    try:
        with Fetcher(settings, sleep=lambda s: None) as fetcher:
            fetched = fetcher.fetch(f"http://127.0.0.1:{raw_server.port}/page")
        assert fetched.content is None or len(fetched.content) <= 4096
    except EpistemeError as error:
        _clean(error)
    assert time.monotonic() - started < 60  # against a hang: 20 times the fetch's own 3 s deadline


# through the CLI: every input ends in an envelope ------------------------------------------------

COMMANDS = [
    ["snapshot", "--allow-localhost", "--retries", "0", "--timeout", "500", "--manifest"],
    ["manual-ingest", "--map"],
    ["ingest", "warc"],
]


@fuzz(40)
@given(data=st.one_of(st.binary(max_size=120), JSONISH.map(_json_bytes), HUGE_NUMBERS),
       command=st.sampled_from(COMMANDS))
def test_every_input_file_ends_in_an_envelope(tmp_path_factory: pytest.TempPathFactory, data: bytes,
                                              command: list[str]) -> None:
    from episteme_core.testing import invoke

    ran("CLI input files")
    folder = tmp_path_factory.mktemp("cli")
    path = folder / "input"
    path.write_bytes(data)
    result = invoke("--json", "--home", str(folder / "home"), *command, str(path))
    envelope = result.envelope
    validate(envelope, "cli-envelope")
    if result.exit_code != 0:
        assert envelope["error"]["code"] in CLEAN
