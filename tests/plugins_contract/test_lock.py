"""One lock: ``ctx.writing()`` is re-entrant within a thread, so a source that takes the lock under
``ingest --reshard`` (which holds it already) is not refused by its own process."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from episteme_core.errors import EpistemeError
from episteme_core.kernel.context import RunContext
from episteme_core.kernel.loader import load_plugins
from episteme_core.store.home import Home
from episteme_core.testing import invoke, make_sample_home, read_chunks


def test_builtin_warc_source_under_reshard(home: Path, tmp_path: Path) -> None:
    """``episteme ingest --reshard warc FILE``: the WARC source takes the lock inside the command's."""
    sample = make_sample_home(tmp_path / "origin")
    warc = tmp_path / "origin.warc.gz"
    assert invoke("--home", str(sample.root), "export", "warc", "--out", str(warc)).exit_code == 0
    result = invoke("--home", str(home), "--json", "ingest", "--reshard", "warc", str(warc))
    assert result.exit_code == 0, result.stderr
    assert result.envelope["data"]["pack"]["status"] == "ok"
    assert [c.text for c in read_chunks(home)] == [c.text for c in sample.chunks]
    again = invoke("--home", str(home), "--json", "ingest", "--reshard", "warc", str(warc))
    assert again.exit_code == 0, again.stderr
    assert again.envelope["data"]["pack"]["resharded"] is True
    assert not (home / "writer.lock").exists()


def test_plugin_source_taking_the_lock_under_reshard(plugin_site, home: Path) -> None:
    plugin_site("sample")
    result = invoke("--home", str(home), "--json", "ingest", "--reshard", "sample-source", "a note")
    assert result.exit_code == 0, result.stderr
    assert result.envelope["data"]["pack"]["resharded"] is True
    assert not (home / "writer.lock").exists()


def _context(root: Path) -> RunContext:
    return RunContext(command="test", home=Home(root), plugins=load_plugins())


def test_writing_nests_in_one_thread_and_refuses_another(tmp_path: Path) -> None:
    ctx = _context(tmp_path / "h")
    other = _context(tmp_path / "h")  # another context of the same process and home
    refused: list[str] = []

    def second_writer() -> None:
        try:
            with other.writing():
                refused.append("entered")
        except EpistemeError as exc:
            refused.append(exc.code)

    with ctx.writing():
        with other.writing():  # same thread: nested, not refused
            assert (tmp_path / "h" / "writer.lock").exists()
        assert (tmp_path / "h" / "writer.lock").exists()  # the inner block did not release it
        thread = threading.Thread(target=second_writer)
        thread.start()
        thread.join()
    assert refused == ["RESOURCE_BUSY"]
    assert not (tmp_path / "h" / "writer.lock").exists()
    with other.writing():  # released: another writer may take it now
        pass


def test_an_error_inside_a_nested_block_still_releases_the_lock(tmp_path: Path) -> None:
    ctx = _context(tmp_path / "h")
    with pytest.raises(RuntimeError), ctx.writing(), ctx.writing():
        raise RuntimeError("boom")
    assert not (tmp_path / "h" / "writer.lock").exists()
    with ctx.writing():
        pass


def test_there_is_one_lock_api() -> None:
    import episteme_core.personal.ingest as ingest

    assert not hasattr(ingest, "holding_lock")
