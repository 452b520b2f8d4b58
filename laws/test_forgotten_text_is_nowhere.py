"""ForgottenTextIsNowhere: after forget, the forgotten text is in no file of the home: no stage, no blob, no log line, no shard.

For any set of books (some sharing paragraphs) ingested and packed, forgetting one book whole, or
one paragraph of a book, leaves no byte sequence of the forgotten text anywhere under the home
(every file read), unless another book not forgotten holds the same text (then it stays, named by
that book alone); ``verify`` finds no problem, and ``query`` for its words finds only that other
book. A paragraph forgotten stays forgotten when its book is ingested again.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.testing import invoke

WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa"]
paragraphs = st.lists(st.sampled_from(WORDS), min_size=2, max_size=5).map(" ".join)
shelves = st.lists(st.lists(paragraphs, min_size=1, max_size=4), min_size=2, max_size=3)


def _holders(home: Path, needle: bytes) -> list[str]:
    return sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and needle in p.read_bytes())


@settings(max_examples=12, deadline=None)
@given(shelves, st.booleans(), st.data())
def test_forgotten_text_is_nowhere(books: list[list[str]], whole: bool, data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shelf, home = root / "shelf", root / "home"
        shelf.mkdir()
        secret_at = data.draw(st.integers(0, len(books[0]) - 1))
        books[0][secret_at] += " the-secret-xyzzy"
        for number, texts in enumerate(books):
            (shelf / f"b{number}.txt").write_text("\n\n".join(texts) + "\n", encoding="utf-8")
        assert invoke("--home", str(home), "ingest", "books", str(shelf)).exit_code == 0
        target = "book:shelf/b0" if whole else f"book:shelf/b0#{secret_at + 1}"
        result = invoke("--home", str(home), "forget", target, "--reason", "law", "--json")
        assert result.exit_code == 0, result.stderr
        gone = ["the-secret-xyzzy"] if not whole else ["the-secret-xyzzy", *books[0]]
        for text in gone:
            kept_elsewhere = any(text in t for other in books[1:] for t in other)
            if not kept_elsewhere:
                assert _holders(home, text.encode()) == [], text
        assert invoke("--home", str(home), "verify").exit_code == 0
        hits = invoke("--home", str(home), "query", "--term", "xyzzy", "--json")
        assert hits.exit_code == 0 and hits.envelope["data"]["results"] == []
        again = invoke("--home", str(home), "ingest", "books", str(shelf), "--json")
        assert again.exit_code == 0
        assert _holders(home, b"the-secret-xyzzy") == []
