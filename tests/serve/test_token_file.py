"""The token file: a regular file of this user, mode 0600 or 0400, at most 1 KiB, not a symlink, one token."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from episteme_core.errors import EpistemeError
from episteme_core.serve.guards import MAX_TOKEN_FILE_BYTES, MIN_TOKEN_CHARS, read_token_file


def _write(path: Path, content: bytes, mode: int = 0o600) -> Path:
    path.write_bytes(content)
    path.chmod(mode)
    return path


def _refused(path: Path) -> EpistemeError:
    with pytest.raises(EpistemeError) as refused:
        read_token_file(path)
    assert str(path) in refused.value.message and refused.value.hint
    return refused.value


@pytest.mark.parametrize("mode", [0o600, 0o400])
def test_a_private_file_gives_its_token_without_surrounding_whitespace(tmp_path: Path, mode: int) -> None:
    token = secrets.token_urlsafe(32)
    assert read_token_file(_write(tmp_path / "t", f"  {token}\n".encode(), mode)) == token


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o700, 0o500, 0o200])
def test_any_other_mode_is_refused(tmp_path: Path, mode: int) -> None:
    error = _refused(_write(tmp_path / "t", secrets.token_urlsafe(32).encode(), mode))
    assert error.code == "INVALID_INPUT" and f"mode {mode:04o}" in error.message


def test_a_file_of_exactly_1_kib_is_read_and_one_byte_more_is_limit_exceeded(tmp_path: Path) -> None:
    token = "a" * (MAX_TOKEN_FILE_BYTES - 1)
    assert read_token_file(_write(tmp_path / "at", (token + "\n").encode())) == token
    error = _refused(_write(tmp_path / "past", ("a" * MAX_TOKEN_FILE_BYTES + "\n").encode()))
    assert error.code == "LIMIT_EXCEEDED"


def test_a_symbolic_link_is_refused_even_to_a_good_file(tmp_path: Path) -> None:
    good = _write(tmp_path / "good", secrets.token_urlsafe(32).encode())
    link = tmp_path / "link"
    link.symlink_to(good)
    assert "symbolic link" in _refused(link).message


def test_a_folder_a_fifo_and_a_missing_file_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir(mode=0o700)
    assert "not a regular file" in _refused(folder).message
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    assert "not a regular file" in _refused(fifo).message
    assert "does not exist" in _refused(tmp_path / "nothing").message


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_a_file_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "t", secrets.token_urlsafe(32).encode())
    os.chown(path, 65534, 65534)
    assert "owned by uid 65534" in _refused(path).message


@pytest.mark.parametrize("content", [b"", b"\n", b"two tokens-here-xxxxxxxx", "tökenwithumlautxxxxx".encode(),
                                     b"token\x00with-a-nul-xxxx", b"line-one-xxxxxxxxxx\nline-two-xxxxxxxx"])
def test_content_that_is_not_one_token_is_refused(tmp_path: Path, content: bytes) -> None:
    assert _refused(_write(tmp_path / "t", content)).code == "INVALID_INPUT"


def test_a_token_shorter_than_16_characters_is_refused(tmp_path: Path) -> None:
    assert read_token_file(_write(tmp_path / "at", b"a" * MIN_TOKEN_CHARS)) == "a" * MIN_TOKEN_CHARS
    assert "at least 16" in _refused(_write(tmp_path / "past", b"a" * (MIN_TOKEN_CHARS - 1))).message
