"""TrustedRerunEqualsRead: a manual-ingest that trusts the stat cache's confirmations commits the
same snapshots catalog as one that hashes every file and reads the catalog (``--rehash``).

Whatever the sequence of runs (maps that name the same sources with other files or fragments,
files rewritten between runs), two homes given the same runs, one trusting what it recorded and
one with ``--rehash``, end each run with every source's latest snapshot, history and options equal.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from episteme_core.stages.snapshots import read_catalog
from episteme_core.store.home import Home
from episteme_core.testing import invoke

SOURCES = [f"https://example.org/{n}" for n in range(2)]
FILES = ["a.txt", "b.txt", "c.txt"]

step = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(FILES), st.sampled_from(["one", "two", "three"])),
    st.tuples(st.just("ingest"),
              st.lists(st.tuples(st.sampled_from(FILES), st.sampled_from(["", "#part", "#other"])),
                       min_size=len(SOURCES), max_size=len(SOURCES))),
)


def _states(home: Path) -> dict[str, object]:
    catalog = read_catalog(Home(home))
    return {s: (catalog.state(s).latest, catalog.state(s).history, catalog.options(s))
            for s in catalog.sources()}


@settings(max_examples=25, deadline=None)
@given(st.lists(step, min_size=1, max_size=5))
# another file became the source's latest in a run that did not name a.txt: a.txt's old
# confirmation must not hold when it is named again
@example([("ingest", [("c.txt", ""), ("b.txt", "")]), ("ingest", [("a.txt", ""), ("b.txt", "")])])
# the same file and source with a new fragment, then without it again
@example([("ingest", [("a.txt", "#part"), ("b.txt", "")]), ("ingest", [("a.txt", ""), ("b.txt", "")])])
def test_a_trusted_rerun_commits_what_a_rehash_commits(steps: list[tuple[object, ...]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for name in FILES:
            (root / name).write_text(f"{name} first")
        time.sleep(0.12)  # the files' times settled: the stat cache records them (and trusts them)
        for number, item in enumerate([("ingest", [(f, "") for f in FILES[:len(SOURCES)]]), *steps]):
            if item[0] == "write":
                (root / str(item[1])).write_text(f"{item[1]} {item[2]}")
                time.sleep(0.12)
                continue
            named = item[1]
            assert isinstance(named, list)
            entries = [{"sourceUrl": source + fragment, "localPath": name}
                       for source, (name, fragment) in zip(SOURCES, named, strict=True)]
            map_path = root / f"map{number}.json"
            map_path.write_text(json.dumps(entries))
            for home, extra in ((root / "trusting", []), (root / "rehashing", ["--rehash"])):
                done = invoke("--home", str(home), "manual-ingest", "--map", str(map_path),
                              "--root", str(root), *extra)
                assert done.exit_code == 0, done.stderr
            assert _states(root / "trusting") == _states(root / "rehashing")
