"""Speed against the engines users would pick instead: episteme beside tantivy, SQLite FTS5, bm25s and
Lucene on the same chunk texts, in one run, as ratios to episteme.

    python bench/peers.py                         # 20,000 chunks
    python bench/peers.py --chunks 1000000 --runs 9 --build-rounds 1
    python bench/peers.py --lucene-jar anserini-0.22.1-fatjar.jar   # Lucene too (see below)

The corpus is bench/retrieval.py's (documents of ~600-character paragraphs, a Zipf vocabulary of
20,000 words). episteme chunks it; every chunk's heading and text go to each peer as one JSON line,
so all of them index the same texts, each with its English stemming: tantivy (``en_stem``), SQLite
FTS5 (``porter unicode61``, the stdlib's sqlite3 when ``PRAGMA compile_options`` has FTS5), bm25s
(PyStemmer, English stop words, its saved index memory-mapped), Lucene (Anserini's jar, which
Pyserini ships, run with the ``java`` on PATH: ``pip download pyserini==0.22.1 --no-deps`` and unzip
``pyserini/resources/jars/*.jar``; Pyserini's Python API needs torch and faiss, so its jar is driven
directly; skipped with the reason when no jar or no JDK is found). Queries are 1-3 words from the
2,000 commonest, OR of the words, top 10 with their text.

Measured, each system in turn within every round (interleaved), CPU (user + system, of the new
process with ``RUSAGE_CHILDREN``, or of this process / the server process) and wall:
- cold query: a new process that opens the index and answers one query (episteme: the ``episteme``
  console script, ``query --json``; a peer: ``python -c`` opening its engine; Lucene: a JVM);
- warm query: in a process that holds the index open (episteme: the library ``query()`` on open
  shards, as ``serve`` keeps them; Lucene: inside its JVM, measured there);
- serve call: a query over loopback HTTP to a server holding the index (episteme: ``episteme serve``,
  an MCP ``tools/call``; a peer: a stdlib HTTP server, the body the term; Lucene: the JDK's
  HttpServer), the server's CPU per call from /proc;
- index build (episteme: ``index --reshard`` from its chunks; a peer: from the JSON lines), index
  size on disk, and the unchanged re-run (episteme: ``index``; a peer's build script, which hashes
  its input and stops when a stamp beside the index says it was built from the same bytes).

Bytecode is written before anything is timed (``compileall`` and one untimed run of each command,
``PYTHONDONTWRITEBYTECODE`` left out of the children's environment). Prints a Markdown table for
docs/benchmarks.md with the load average before and after.
"""

from __future__ import annotations

import argparse
import compileall
import http.client
import json
import os
import platform
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from retrieval import CHILD_ENV, corpus_batches  # noqa: E402

PY = sys.executable

# -- the peers: how each opens its index and answers a query (run as ``python -c`` and in process) --

OPEN = {
    "tantivy": "import tantivy\nindex = tantivy.Index.open(where)\nsearcher = index.searcher()\n",
    "fts5": ("import sqlite3\ndb = sqlite3.connect(f'file:{where}/index.db?mode=ro', uri=True,"
             " check_same_thread=False)\n"),
    "bm25s": ("import bm25s, Stemmer\nretriever = bm25s.BM25.load(where, load_corpus=True, mmap=True,"
              " show_progress=False)\nstemmer = Stemmer.Stemmer('english')\n"),
}
SEARCH = {
    "tantivy": (
        "def search(term):\n"
        "    query = index.parse_query(term, ['heading', 'text'])\n"
        "    out = []\n"
        "    for score, address in searcher.search(query, 10).hits:\n"
        "        doc = searcher.doc(address)\n"
        "        out.append({'id': doc['id'][0], 'score': score, 'text': doc['text'][0]})\n"
        "    return out\n"),
    "fts5": (
        "def search(term):\n"
        "    match = ' OR '.join('\"%s\"' % w.replace('\"', '\"\"') for w in term.split())\n"
        "    rows = db.execute('SELECT id, bm25(chunks), text FROM chunks WHERE chunks MATCH ? '\n"
        "                      'ORDER BY bm25(chunks) LIMIT 10', (match,)).fetchall()\n"
        "    return [{'id': i, 'score': -s, 'text': t} for i, s, t in rows]\n"),
    "bm25s": (
        "def search(term):\n"
        "    tokens = bm25s.tokenize([term], stopwords='en', stemmer=stemmer, return_ids=False,\n"
        "                            show_progress=False)\n"
        "    docs, scores = retriever.retrieve(tokens, k=10, show_progress=False)\n"
        "    return [{'id': d['id'], 'score': float(s), 'text': d['text']}\n"
        "            for d, s in zip(docs[0], scores[0])]\n"),
}
COLD = "import json, sys\nwhere = sys.argv[1]\n{open}{search}print(json.dumps(search(sys.argv[2])))\n"
SERVE = (
    "import sys\nwhere = sys.argv[1]\n{open}{search}"
    "import json, socket\nfrom http.server import BaseHTTPRequestHandler, ThreadingHTTPServer\n"
    "class Handler(BaseHTTPRequestHandler):\n"
    "    protocol_version = 'HTTP/1.1'\n"
    "    def do_POST(self):\n"
    "        term = self.rfile.read(int(self.headers['Content-Length'])).decode()\n"
    "        body = json.dumps(search(term)).encode()\n"
    "        self.send_response(200)\n"
    "        self.send_header('Content-Type', 'application/json')\n"
    "        self.send_header('Content-Length', str(len(body)))\n"
    "        self.end_headers()\n"
    "        self.wfile.write(body)\n"
    "    def setup(self):\n"
    "        super().setup()\n"
    "        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)\n"
    "    def log_message(self, *args):\n"
    "        pass\n"
    "server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)\n"
    "print('listening', server.server_address[1], flush=True)\n"
    "server.serve_forever()\n"
)
# A build script: stop when the stamp beside the index names the input's sha256 (the unchanged
# re-run), else build from the JSON lines and write the stamp.
BUILD = '''
import hashlib, json, os, shutil, subprocess, sys
engine, source, where = sys.argv[1:4]
digest = hashlib.sha256(open(source, "rb").read()).hexdigest()
stamp = os.path.join(where, ".stamp")
if os.path.exists(stamp) and open(stamp).read() == digest:
    sys.exit(0)
shutil.rmtree(where, ignore_errors=True)
os.makedirs(where)
rows = [json.loads(line) for line in open(source, encoding="utf-8")]
if engine == "tantivy":
    import tantivy
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field("heading", stored=True, tokenizer_name="en_stem")
    builder.add_text_field("text", stored=True, tokenizer_name="en_stem")
    index = tantivy.Index(builder.build(), path=where)
    writer = index.writer()
    for row in rows:
        writer.add_document(tantivy.Document(id=row["id"], heading=row["heading"], text=row["text"]))
    writer.commit()
    writer.wait_merging_threads()
elif engine == "fts5":
    import sqlite3
    db = sqlite3.connect(os.path.join(where, "index.db"))
    db.execute("CREATE VIRTUAL TABLE chunks USING fts5(id UNINDEXED, heading, text, "
               "tokenize='porter unicode61 remove_diacritics 2')")
    db.executemany("INSERT INTO chunks VALUES (?, ?, ?)", ((r["id"], r["heading"], r["text"]) for r in rows))
    db.execute("INSERT INTO chunks(chunks) VALUES ('optimize')")
    db.commit()
    db.close()
elif engine == "bm25s":
    import bm25s, Stemmer
    tokens = bm25s.tokenize([r["heading"] + " " + r["text"] for r in rows], stopwords="en",
                            stemmer=Stemmer.Stemmer("english"), show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    retriever.save(where, corpus=[{"id": r["id"], "text": r["text"]} for r in rows])
elif engine == "lucene":
    jar = sys.argv[4]
    docs = os.path.join(where, "docs")
    os.makedirs(docs)
    with open(os.path.join(docs, "docs.jsonl"), "w", encoding="utf-8") as out:
        for r in rows:
            out.write(json.dumps({"id": r["id"], "contents": r["heading"] + "\\n" + r["text"]}) + "\\n")
    subprocess.run(["java", "-cp", jar, "io.anserini.index.IndexCollection", "-collection", "JsonCollection",
                    "-input", docs, "-index", os.path.join(where, "index"), "-generator",
                    "DefaultLuceneDocumentGenerator", "-threads", "1", "-storeRaw"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(docs)
del rows
open(stamp, "w").write(digest)
'''
LUCENE_JAVA = r'''
import java.io.*;
import java.lang.management.*;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import com.sun.net.httpserver.HttpServer;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.Document;
import org.apache.lucene.index.*;
import org.apache.lucene.search.*;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.FSDirectory;
import io.anserini.analysis.DefaultEnglishAnalyzer;

/** The Lucene peer: open an Anserini index, answer a query (query), many (warm), or over HTTP (serve). */
public class PeerLucene {
  static IndexSearcher searcher;
  static Analyzer analyzer;

  static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  static String search(String term) throws IOException {
    BooleanQuery.Builder query = new BooleanQuery.Builder();
    try (TokenStream tokens = analyzer.tokenStream("contents", term)) {
      CharTermAttribute word = tokens.addAttribute(CharTermAttribute.class);
      tokens.reset();
      while (tokens.incrementToken())
        query.add(new TermQuery(new Term("contents", word.toString())), BooleanClause.Occur.SHOULD);
      tokens.end();
    }
    StringBuilder out = new StringBuilder("[");
    for (ScoreDoc hit : searcher.search(query.build(), 10).scoreDocs) {
      Document doc = searcher.doc(hit.doc);
      if (out.length() > 1) out.append(',');
      out.append("{\"id\":").append(quote(doc.get("id"))).append(",\"score\":").append(hit.score)
         .append(",\"text\":").append(quote(doc.get("raw"))).append('}');
    }
    return out.append(']').toString();
  }

  public static void main(String[] args) throws Exception {
    searcher = new IndexSearcher(DirectoryReader.open(FSDirectory.open(Paths.get(args[1]))));
    searcher.setSimilarity(new BM25Similarity(0.9f, 0.4f));
    analyzer = DefaultEnglishAnalyzer.newDefaultInstance();
    if (args[0].equals("query")) {
      System.out.println(search(args[2]));
    } else if (args[0].equals("warm")) {
      List<String> queries = Files.readAllLines(Paths.get(args[2]), StandardCharsets.UTF_8);
      ThreadMXBean bean = ManagementFactory.getThreadMXBean();
      for (String q : queries) search(q);  // the JIT's round
      StringBuilder cpu = new StringBuilder(), wall = new StringBuilder();
      for (String q : queries) {
        long c = bean.getCurrentThreadCpuTime(), w = System.nanoTime();
        search(q);
        cpu.append(bean.getCurrentThreadCpuTime() - c).append(' ');
        wall.append(System.nanoTime() - w).append(' ');
      }
      System.out.println(cpu.toString().trim());
      System.out.println(wall.toString().trim());
    } else {
      HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      server.createContext("/", exchange -> {
        String term = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        byte[] body = search(term).getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, body.length);
        exchange.getResponseBody().write(body);
        exchange.close();
      });
      server.start();
      System.out.println("listening " + server.getAddress().getPort());
      System.out.flush();
    }
  }
}
'''
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def become_subreaper() -> bool:
    """Make this process the reaper of its descendants' orphans (Linux ``PR_SET_CHILD_SUBREAPER``), so
    the CPU of a command's worker processes (``index`` builds on a pool) counts in ``RUSAGE_CHILDREN``
    once they are reaped."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def reap_orphans() -> None:
    """Wait for every descendant left (workers a command started, reparented here)."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def cpu_of(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one new process: user + system of the child, its threads and
    the processes it started (no server of this bench may be running meanwhile)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   env=env or CHILD_ENV)
    wall = time.perf_counter() - started
    reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def process_cpu(pid: int) -> float:
    """CPU seconds a running process has used (utime + stime from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def size_of(path: Path) -> int:
    if not path.is_dir():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def episteme_cli() -> list[str]:
    beside = Path(PY).parent / "episteme"
    return [str(beside)] if beside.exists() else [PY, "-m", "episteme_core"]


class System:
    """One engine under test: how to build it, query it cold, warm and through a server."""

    def __init__(self, name: str, index: Path) -> None:
        self.name, self.index = name, index
        self.server: subprocess.Popen[str] | None = None
        self.port = 0
        self.connection: http.client.HTTPConnection | None = None

    def build_cmd(self, source: Path) -> list[str]:
        raise NotImplementedError

    def rerun_cmd(self, source: Path) -> list[str]:
        return self.build_cmd(source)

    def cold_cmd(self, term: str) -> list[str]:
        raise NotImplementedError

    def serve_cmd(self) -> list[str]:
        raise NotImplementedError

    def start(self) -> None:
        self.server = subprocess.Popen(self.serve_cmd(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                       text=True, env=CHILD_ENV)
        assert self.server.stdout is not None
        line = self.server.stdout.readline()
        if not line.startswith("listening"):
            raise SystemExit(f"{self.name}: the server did not start ({line!r})")
        self.port = int(line.split()[1])
        self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        self.connection.connect()
        self.connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def call(self, term: str, n: int) -> None:
        assert self.connection is not None
        self.connection.request("POST", "/", body=term.encode(), headers={"Content-Type": "text/plain"})
        reply = self.connection.getresponse()
        json.loads(reply.read())

    def stop(self) -> None:
        if self.connection is not None:
            self.connection.close()
        if self.server is not None:
            self.server.terminate()
            self.server.wait(60)


class Episteme(System):
    def __init__(self, home: Path) -> None:
        super().__init__("episteme", home / "shards")
        self.home = home
        self.shards: Any = None

    def build_cmd(self, source: Path) -> list[str]:
        return [*episteme_cli(), "--home", str(self.home), "index", "--reshard"]

    def rerun_cmd(self, source: Path) -> list[str]:
        return [*episteme_cli(), "--home", str(self.home), "index"]

    def cold_cmd(self, term: str) -> list[str]:
        return [*episteme_cli(), "--home", str(self.home), "query", "--term", term, "--json"]

    def warm_setup(self) -> Callable[[str], Any]:
        from episteme_core.bm25.shards import open_shards
        from episteme_core.search.query import query
        from episteme_core.store.home import Home

        home = Home(self.home)
        shard_set = open_shards(home)
        shard_set.keep_warm()  # as the server does once it has opened its shards
        return lambda term: query(home, term, limit=10, shard_set=shard_set)

    def serve_cmd(self) -> list[str]:
        return [*episteme_cli(), "--home", str(self.home), "serve", "--port", "0"]

    def start(self) -> None:
        import re

        self.server = subprocess.Popen(self.serve_cmd(), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                       text=True, env=CHILD_ENV)
        assert self.server.stderr is not None
        for line in self.server.stderr:
            found = re.search(r"listening on http://127\.0\.0\.1:(\d+)/mcp", line)
            if found:
                self.port = int(found.group(1))
                break
        else:
            raise SystemExit(f"episteme serve did not start (exit {self.server.wait()})")
        drain = self.server.stderr
        threading.Thread(target=lambda: [None for _ in drain], daemon=True).start()
        self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        self.connection.connect()
        self.connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def call(self, term: str, n: int) -> None:
        assert self.connection is not None
        body = json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                           "params": {"name": "query", "arguments": {"term": term, "limit": 10}}}).encode()
        self.connection.request("POST", "/mcp", body=body, headers=MCP_HEADERS)
        reply = json.loads(self.connection.getresponse().read())
        if reply["result"].get("isError"):
            raise SystemExit(f"episteme serve: {reply['result']['content'][0]['text']}")


class PythonPeer(System):
    def build_cmd(self, source: Path) -> list[str]:
        return [PY, "-c", BUILD, self.name, str(source), str(self.index)]

    def cold_cmd(self, term: str) -> list[str]:
        return [PY, "-c", COLD.format(open=OPEN[self.name], search=SEARCH[self.name]), str(self.index), term]

    def warm_setup(self) -> Callable[[str], Any]:
        space: dict[str, Any] = {"where": str(self.index)}
        exec(OPEN[self.name] + SEARCH[self.name], space)  # noqa: S102  (the peer's own code, above)
        return space["search"]  # type: ignore[no-any-return]

    def serve_cmd(self) -> list[str]:
        return [PY, "-c", SERVE.format(open=OPEN[self.name], search=SEARCH[self.name]), str(self.index)]


class Lucene(System):
    def __init__(self, index: Path, jar: Path, classes: Path) -> None:
        super().__init__("lucene", index)
        self.jar, self.classes = jar, classes

    def java(self, *args: str) -> list[str]:
        return ["java", "-cp", f"{self.jar}{os.pathsep}{self.classes}", "PeerLucene", *args]

    def build_cmd(self, source: Path) -> list[str]:
        return [PY, "-c", BUILD, "lucene", str(source), str(self.index), str(self.jar)]

    def cold_cmd(self, term: str) -> list[str]:
        return self.java("query", str(self.index / "index"), term)

    def warm_in_jvm(self, terms: list[str], workdir: Path) -> tuple[list[float], list[float]]:
        queries = workdir / "lucene-queries.txt"
        queries.write_text("\n".join(terms) + "\n")
        out = subprocess.run(self.java("warm", str(self.index / "index"), str(queries)), capture_output=True,
                             text=True, check=True).stdout.splitlines()
        return [int(v) / 1e9 for v in out[0].split()], [int(v) / 1e9 for v in out[1].split()]

    def serve_cmd(self) -> list[str]:
        command = self.java("serve", str(self.index / "index"))
        return [command[0], "-Dsun.net.httpserver.nodelay=true", *command[1:]]  # no Nagle delay


def lucene_jar(given: str | None) -> tuple[Path | None, str]:
    """The Anserini jar to drive Lucene with, or None and why not."""
    if shutil.which("java") is None or shutil.which("javac") is None:
        return None, "no JDK (java and javac) on PATH"
    candidates = [Path(given)] if given else []
    if not given:
        try:
            import importlib.util

            spec = importlib.util.find_spec("pyserini")
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.submodule_search_locations:
            for location in spec.submodule_search_locations:
                candidates += sorted(Path(location, "resources", "jars").glob("anserini-*-fatjar.jar"))
    if not candidates or not candidates[0].is_file():
        return None, ("no Anserini jar: Pyserini is not installed here (its Python API needs torch and "
                      "faiss); give --lucene-jar (from `pip download pyserini==0.22.1 --no-deps`)")
    probe = subprocess.run(["java", "-cp", str(candidates[0]), "io.anserini.index.IndexCollection"],
                           capture_output=True, text=True)
    if "UnsupportedClassVersionError" in probe.stderr:
        return None, f"{candidates[0].name} needs a newer Java than the java on PATH"
    return candidates[0], ""


PROBE = """
import sys
before = set(sys.modules)
from episteme_core.cli.main import run
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    run(sys.argv[1:])
print(" ".join(m for m in sys.modules if m not in before))
"""


def breakdown(home: Path, term: str, runs: int) -> list[tuple[str, int, float]]:
    """Where a cold query's CPU goes: new processes importing, in turn, nothing, the standard library
    modules the query imports, then its other third-party modules, then episteme's, then the whole
    query (interleaved, ``runs`` times); (step, modules, median CPU of the step alone)."""
    args = ["--home", str(home), "query", "--term", term, "--json"]
    loaded = subprocess.run([PY, "-c", PROBE, *args], capture_output=True, text=True, check=True,
                            env=CHILD_ENV).stdout.split()
    stdlib = set(sys.stdlib_module_names)
    ours = [m for m in loaded if m.split(".")[0] == "episteme_core"]
    library = [m for m in loaded if m.split(".")[0].lstrip("_") in stdlib or m.split(".")[0] in stdlib]
    others = [m for m in loaded if m not in ours and m not in library]
    steps = [("the interpreter (`python -c pass`)", []), ("standard-library modules", library),
             ("third-party modules (attrs, PyStemmer, ...)", others), ("episteme's modules", ours)]
    imports = ("import importlib\nfor m in {!r}:\n"
               "    try: importlib.import_module(m)\n    except Exception: pass\n")
    commands, names = [], []
    for i, (name, _) in enumerate(steps):
        modules = [m for _, group in steps[: i + 1] for m in group]
        commands.append([PY, "-c", imports.format(modules) if modules else "pass"])
        names.append(name)
    commands.append([*episteme_cli(), *args])
    names.append("the query's own work (the whole cold query)")
    samples: list[list[float]] = [[] for _ in commands]
    for command in commands:
        cpu_of(command)
    for _ in range(runs):
        for i, command in enumerate(commands):
            samples[i].append(cpu_of(command)[0])
    medians = [median(s) for s in samples]
    sizes = [len(group) for _, group in steps] + [0]
    return [(name, size, medians[i] - (medians[i - 1] if i else 0.0))
            for i, (name, size) in enumerate(zip(names, sizes, strict=True))]


def warm_unopened(home: Path, terms: list[str]) -> tuple[float, float]:
    """Median CPU and wall of ``query(home, term)`` given no shard set (as a library user calls it:
    the shards kept open between calls), after a round that touches what the queries read."""
    from episteme_core.search.query import query
    from episteme_core.store.home import Home

    opened = Home(home)
    for term in terms:
        query(opened, term, limit=10)
    cpus, walls = [], []
    for term in terms:
        wall, cpu = time.perf_counter(), time.process_time()
        query(opened, term, limit=10)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return median(cpus), median(walls)


def profile_warm(search: Callable[[str], Any], terms: list[str], count: int) -> None:
    """cProfile over ``count`` warm queries of ``search`` (episteme's), the top functions by own time."""
    import cProfile
    import pstats

    chosen = [terms[i % len(terms)] for i in range(count)]
    profiler = cProfile.Profile()
    profiler.enable()
    for term in chosen:
        search(term)
    profiler.disable()
    print(f"\nwhere {count} warm episteme queries spend their time (cProfile, own time):")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def build_corpus(workdir: Path, chunks: int) -> tuple[Path, Path, list[str]]:
    """episteme's home (documents chunked, not indexed) and the chunks as JSON lines; the vocabulary."""
    from episteme_core.chunking.paragraph import ParagraphChunker
    from episteme_core.chunking.run import chunk_home
    from episteme_core.chunking.window import WindowChunker
    from episteme_core.stages.chunks import iter_chunk_objects
    from episteme_core.stages.documents import write_documents
    from episteme_core.store.home import Home

    home = Home(workdir / "home")
    home.root.mkdir(parents=True)
    words: list[str] = []
    for batch, batch_words in corpus_batches(chunks):
        write_documents(home, batch)
        words = batch_words
    chunk_home(home, [ParagraphChunker(), WindowChunker()], max_chars=6000, overlap_chars=400)
    source = workdir / "chunks.jsonl"
    with source.open("w", encoding="utf-8") as out:
        rows = sorted((r["id"], r["heading"], r["text"]) for body in iter_chunk_objects(home)
                      for r in body["chunks"])
        for chunk_id, heading, text in rows:
            out.write(json.dumps({"id": chunk_id, "heading": heading, "text": text}) + "\n")
    return home.root, source, words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=15, help="cold queries per system")
    parser.add_argument("--queries", type=int, default=50, help="warm queries per system")
    parser.add_argument("--calls", type=int, default=200, help="serve calls per system")
    parser.add_argument("--build-rounds", type=int, default=2, help="index builds per system")
    parser.add_argument("--reruns", type=int, default=5, help="unchanged re-runs per system")
    parser.add_argument("--lucene-jar", metavar="JAR", help="Anserini's fat jar (Pyserini ships it)")
    parser.add_argument("--only", metavar="NAMES",
                        help="comma-separated peers to run beside episteme (default: all; 'none': none)")
    parser.add_argument("--keep", metavar="DIR", help="work in DIR and keep it (the corpus is reused)")
    parser.add_argument("--reuse-builds", action="store_true",
                        help="with --keep: measure the queries on the indexes a run left (no build row)")
    parser.add_argument("--profile", type=int, metavar="N", default=0,
                        help="print where episteme's warm query spends its time (cProfile, N queries)")
    args = parser.parse_args()
    if not become_subreaper():
        print("(not a subreaper here: a build's worker processes may be missing from its CPU)")
    load_before = os.getloadavg()

    workdir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="episteme-peers-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if (workdir / "chunks.jsonl").exists() and (workdir / "home" / "chunks").exists():
        home, source = workdir / "home", workdir / "chunks.jsonl"
        words = next(w for _, w in corpus_batches(100))
        with source.open("rb") as lines:  # the corpus kept there, whatever --chunks says
            args.chunks = sum(1 for _ in lines)
    else:
        shutil.rmtree(workdir / "home", ignore_errors=True)
        home, source, words = build_corpus(workdir, args.chunks)

    skipped: dict[str, str] = {}
    systems: list[System] = [Episteme(home)]
    fts5 = any("FTS5" in row[0] for row in __import__("sqlite3").connect(":memory:").execute(
        "PRAGMA compile_options"))
    for name in ("tantivy", "fts5", "bm25s"):
        module = {"tantivy": "tantivy", "fts5": "sqlite3", "bm25s": "bm25s"}[name]
        if args.only and name not in args.only.split(","):
            continue
        try:
            __import__(module)
        except ImportError:
            skipped[name] = f"{module} is not installed"
            continue
        if name == "fts5" and not fts5:
            skipped[name] = "this sqlite3 has no FTS5 (PRAGMA compile_options)"
            continue
        systems.append(PythonPeer(name, workdir / f"index-{name}"))
    if not args.only or "lucene" in args.only.split(","):
        jar, why = lucene_jar(args.lucene_jar)
        if jar is None:
            skipped["lucene"] = why
        else:
            classes = workdir / "java"
            classes.mkdir(exist_ok=True)
            (classes / "PeerLucene.java").write_text(LUCENE_JAVA)
            subprocess.run(["javac", "-cp", str(jar), "-d", str(classes), str(classes / "PeerLucene.java")],
                           check=True, capture_output=True)
            systems.append(Lucene(workdir / "index-lucene", jar, classes))

    # bytecode before timing: the kernel and plugins compiled, every command run once
    for tree in (ROOT / "episteme_core", ROOT / "plugins"):
        compileall.compile_dir(str(tree), quiet=1)
    rng = random.Random(99)
    common = words[:2000]
    terms = [" ".join(rng.choices(common, k=rng.randint(1, 3)))
             for _ in range(max(args.runs, args.queries, args.calls))]

    results: dict[str, dict[str, Any]] = {s.name: {} for s in systems}
    builds: dict[str, list[tuple[float, float]]] = {s.name: [] for s in systems}
    for _ in range(0 if args.reuse_builds else args.build_rounds):
        for system in systems:
            if system.name != "episteme":
                shutil.rmtree(system.index, ignore_errors=True)
            builds[system.name].append(cpu_of(system.build_cmd(source)))
    for system in systems:
        cpu, wall = min(builds[system.name], default=(float("nan"), float("nan")))
        results[system.name]["build"] = (cpu, wall)
        results[system.name]["size"] = size_of(system.index)
    reruns: dict[str, list[tuple[float, float]]] = {s.name: [] for s in systems}
    for system in systems:
        cpu_of(system.rerun_cmd(source))  # untimed: bytecode of the re-run's path
    for _ in range(args.reruns):
        for system in systems:
            reruns[system.name].append(cpu_of(system.rerun_cmd(source)))

    cold: dict[str, list[tuple[float, float]]] = {s.name: [] for s in systems}
    for system in systems:
        cpu_of(system.cold_cmd(terms[0]))  # untimed: bytecode, page cache
    for i in range(args.runs):
        for system in systems:
            cold[system.name].append(cpu_of(system.cold_cmd(terms[i])))

    warm: dict[str, tuple[list[float], list[float]]] = {}
    searches = {s.name: s.warm_setup() for s in systems if hasattr(s, "warm_setup")}
    for search in searches.values():
        for term in terms[: args.queries]:
            search(term)  # a round that touches what the queries read
    for name in searches:
        warm[name] = ([], [])
    for term in terms[: args.queries]:
        for name, search in searches.items():
            wall, cpu = time.perf_counter(), time.process_time()
            search(term)
            warm[name][1].append(time.perf_counter() - wall)
            warm[name][0].append(time.process_time() - cpu)
    for system in systems:
        if isinstance(system, Lucene):
            warm[system.name] = system.warm_in_jvm(terms[: args.queries], workdir)
    opened = warm_unopened(home, terms[: args.queries])
    if args.profile:
        profile_warm(searches["episteme"], terms, args.profile)

    served: dict[str, tuple[list[float], float]] = {s.name: ([], 0.0) for s in systems}
    for system in systems:
        system.start()
    try:
        for system in systems:
            for n, term in enumerate(terms[:10]):
                system.call(term, n)  # warm the server's caches and JIT
        server_cpu = {s.name: 0.0 for s in systems}
        for n, term in enumerate(terms[: args.calls]):
            for system in systems:
                assert system.server is not None
                before = process_cpu(system.server.pid)
                started = time.perf_counter()
                system.call(term, n)
                served[system.name][0].append(time.perf_counter() - started)
                server_cpu[system.name] += process_cpu(system.server.pid) - before
        for system in systems:
            served[system.name] = (served[system.name][0], server_cpu[system.name] / args.calls)
    finally:
        for system in systems:
            system.stop()

    for system in systems:
        r = results[system.name]
        r["cold"] = (median([c for c, _ in cold[system.name]]), median([w for _, w in cold[system.name]]))
        r["warm"] = (median(warm[system.name][0]), median(warm[system.name][1]))
        r["serve"] = (served[system.name][1], median(served[system.name][0]))
        r["rerun"] = (median([c for c, _ in reruns[system.name]]),
                      median([w for _, w in reruns[system.name]]))
    steps = breakdown(home, terms[0], args.runs)
    report(args, systems, results, skipped, load_before, os.getloadavg(), home)
    print(f"episteme's `query(home, term)` given no open set (it keeps the home's shards open between "
          f"calls): {opened[0] * 1000:.2f} ms CPU / {opened[1] * 1000:.2f} ms wall (median)")
    print("\n| a cold `episteme query`, step by step (median CPU of new processes) | modules | CPU |")
    print("|---|---:|---:|")
    for name, modules, cpu in steps:
        print(f"| {name} | {modules or '–'} | {cpu * 1000:.1f} ms |")
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)


def report(args: argparse.Namespace, systems: list[System], results: dict[str, dict[str, Any]],
           skipped: dict[str, str], load_before: tuple[float, float, float],
           load_after: tuple[float, float, float], home: Path) -> None:
    def ms(seconds: float) -> str:
        if seconds < 0.001:  # a warm query: two decimals, so that ratios can be read from the table
            return f"{seconds * 1000:.2f} ms"
        return f"{seconds * 1000:.1f} ms" if seconds < 10 else f"{seconds:.1f} s"

    def pair(cpu: float, wall: float) -> str:
        return f"{ms(cpu)} / {ms(wall)}"

    base = results["episteme"]
    print(f"Machine: {platform.machine()}, {os.cpu_count()} CPU(s), Python {platform.python_version()}; "
          f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    builds = "builds reused" if args.reuse_builds else f"best of {args.build_rounds} builds"
    print(f"Corpus: {args.chunks:,} chunks; {args.runs} cold queries, {args.queries} warm queries and "
          f"{args.calls} serve calls per system, interleaved; {builds}, median of {args.reruns} re-runs\n")
    names = [s.name for s in systems]
    print("| measure (CPU / wall) | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    labels = {"cold": "cold query, new process (median)", "warm": "warm query in process (median)",
              "serve": "serve call (server CPU per call / median wall)", "build": "index build (best)",
              "rerun": "unchanged re-run (median)"}
    for key, label in labels.items():
        cells = []
        for name in names:
            cpu, wall = results[name][key]
            ratio = "" if name == "episteme" else f" ({cpu / base[key][0]:.2f}x, {wall / base[key][1]:.2f}x)"
            cells.append(pair(cpu, wall) + ratio)
        print(f"| {label} | " + " | ".join(cells) + " |")
    sizes = []
    for name in names:
        size = results[name]["size"]
        ratio = "" if name == "episteme" else f" ({size / base['size']:.2f}x)"
        sizes.append(f"{size / 1024 / 1024:.1f} MiB{ratio}")
    print("| index size on disk | " + " | ".join(sizes) + " |")
    print("\nRatios are the peer's over episteme's (below 1: the peer is cheaper).")
    for name, why in skipped.items():
        print(f"Skipped {name}: {why}.")
    print(f"episteme home: {home}")


if __name__ == "__main__":
    main()
