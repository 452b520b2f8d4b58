"""DerivedBytesAreReproducible (extract): the same snapshots, options and version give byte-identical
documents, whatever PYTHONHASHSEED the process runs under."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.stages.snapshots import SnapshotWriter, make_identity
from episteme_core.store.home import Home
from episteme_core.testing import run_cli

_words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1,
                 max_size=30)


def _html(paragraphs: list[str]) -> bytes:
    from html import escape

    body = "".join(f'<section id="s{i}"><h2>H{i}</h2><p class="{"note" if i % 2 else ""}">{escape(p)}</p>'
                   f"</section>" for i, p in enumerate(paragraphs))
    return f"<!doctype html><title>t</title><body>{body}</body>".encode()


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paragraphs=st.lists(_words, min_size=1, max_size=5))
def test_extract_bytes_do_not_depend_on_hash_seed(tmp_path_factory, paragraphs: list[str]) -> None:
    outputs = []
    for seed in ("1", "2"):
        home = Path(tmp_path_factory.mktemp("home"))
        writer = SnapshotWriter(Home(home), "test", clock=lambda: "2020-01-01T00:00:00Z")
        for source, data, ctype in [
            ("https://example.org/a", _html(paragraphs), "text/html"),
            ("https://example.org/b.txt", "\n\n".join(paragraphs).encode(), "text/plain"),
        ]:
            writer.observe(make_identity("file", source, data, final_url=source, content_type=ctype), data)
        writer.commit()
        result = run_cli(["extract", "--json", "--home", str(home)], env={"PYTHONHASHSEED": seed})
        assert result.exit_code == 0, result.stderr
        outputs.append((home / "documents" / "index.json").read_bytes())
    assert outputs[0] == outputs[1]
