"""What ``forget`` removed is not served: the MCP tools ``query``, ``show`` and ``ask`` of a real
``episteme serve`` (the SDK's client) find none of it, and the open shards are reopened after it."""

from __future__ import annotations

from pathlib import Path

from episteme_core.testing import invoke

from .conftest import mcp_call, start_server

SECRET = "xyzzy-served-secret"


def test_the_served_tools_never_return_forgotten_text(tmp_path: Path) -> None:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "diary.txt").write_text(f"An ordinary day of evidence.\n\nMy pin is {SECRET} today.\n")
    home = tmp_path / "home"
    assert invoke("--home", str(home), "ingest", "books", str(shelf)).exit_code == 0
    served = start_server(home)
    try:
        found = mcp_call(served.url, "query", {"term": SECRET})
        assert found.structured_content["results"], "served before the forget"
        assert invoke("--home", str(home), "forget", "book:shelf/diary#2").exit_code == 0
        after = mcp_call(served.url, "query", {"term": SECRET})
        assert not after.is_error and after.structured_content["results"] == []
        shown = mcp_call(served.url, "show", {"reference": "book:shelf/diary"})
        assert SECRET not in str(shown.structured_content)
        refused = mcp_call(served.url, "show", {"reference": "book:shelf/diary#2"})
        assert refused.is_error and "forgotten" in refused.content[0].text
        asked = mcp_call(served.url, "ask", {"question": f"what is my pin {SECRET}"})
        assert not asked.is_error
        assert all(SECRET not in p["text"] for p in asked.structured_content["paragraphs"])
    finally:
        served.stop()
