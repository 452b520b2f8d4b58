"""The parser's help width is shutil's, found without importing shutil: ``$COLUMNS``, else the
terminal's, else 80 (the reference page, rendered at 100 columns, checks the whole layout)."""

from __future__ import annotations

import shutil

import pytest

from episteme_core.cli.parser import terminal_columns


@pytest.mark.parametrize("columns", ["37", "100", "", "0", "-5", "wide"])
def test_the_width_is_shutils(monkeypatch: pytest.MonkeyPatch, columns: str) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns
    if columns in ("37", "100"):
        assert terminal_columns() == int(columns)


def test_without_columns_the_width_is_the_terminals_else_80(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert terminal_columns() == shutil.get_terminal_size().columns
