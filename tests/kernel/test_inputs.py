"""The bounded reader for files and stdin, through the library and through the CLI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from episteme_core.errors import EpistemeError
from episteme_core.records.inputs import read_input
from episteme_core.testing import invoke, run_cli


def test_a_file_at_the_bound_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "in.json"
    path.write_bytes(b"x" * 100)
    assert read_input(str(path), 100) == b"x" * 100
    path.write_bytes(b"x" * 101)
    with pytest.raises(EpistemeError) as caught:
        read_input(str(path), 100)
    assert caught.value.code == "LIMIT_EXCEEDED"
    assert str(path) in caught.value.message


@pytest.mark.parametrize("kind", ["missing", "directory", "fifo"])
def test_only_regular_files_are_read(tmp_path: Path, kind: str) -> None:
    path = tmp_path / kind
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    with pytest.raises(EpistemeError) as caught:
        read_input(str(path), 10)
    assert caught.value.code == "INVALID_INPUT"
    assert str(path) in caught.value.message


def test_stdin_is_bounded_through_the_cli(plugin_site) -> None:
    env = plugin_site("sample")
    body = b'{"a": [1, 2, 3]}'  # 16 bytes
    ok = run_cli(["sample-read", "--input", "-", "--max-input-bytes", "16"], stdin=body, env=env)
    assert ok.exit_code == 0, ok.stderr
    over = run_cli(
        ["--json", "sample-read", "--input", "-", "--max-input-bytes", "15"], stdin=body, env=env
    )
    assert over.exit_code == 5
    assert over.envelope["error"]["code"] == "LIMIT_EXCEEDED"


def test_strict_json_errors_reach_the_cli_as_invalid_input(plugin_site) -> None:
    plugin_site("sample")
    result = invoke("--json", "sample-read", "--input", "-", stdin=b'{"a":1,"a":2}')
    assert result.exit_code == 3
    assert result.envelope["error"]["code"] == "INVALID_INPUT"
    assert "duplicate key" in result.envelope["error"]["message"]


@pytest.mark.parametrize("value", ["0", "1048577", "ten", "-5"])
def test_number_options_out_of_range_are_invalid_usage(plugin_site, value: str) -> None:
    plugin_site("sample")
    result = invoke("--json", "sample-read", "--input", "-", "--max-input-bytes", value)
    assert result.exit_code == 2
    assert result.envelope["error"]["code"] == "INVALID_USAGE"
    assert "--max-input-bytes" in result.envelope["error"]["message"]
