"""The token file of ``reader serve``: only a private regular file of the user, at most 1 KiB,
holding one token of 16+ visible characters; compared in constant time."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from episteme_core.api import EpistemeError
from episteme_llama.token_file import MAX_BYTES, MIN_CHARS, authorized, is_loopback, read_token

TOKEN = "s3cr3t-t0ken-for-the-reader-42"


def write(path: Path, content: bytes, mode: int = 0o600) -> Path:
    path.write_bytes(content)
    os.chmod(path, mode)
    return path


def refused(path: Path) -> str:
    with pytest.raises(EpistemeError) as caught:
        read_token(str(path))
    assert caught.value.code == "INVALID_INPUT" and caught.value.hint
    return caught.value.message


@pytest.mark.parametrize("mode", [0o600, 0o400])
def test_a_private_file_gives_its_token(tmp_path: Path, mode: int) -> None:
    assert read_token(str(write(tmp_path / "t", TOKEN.encode() + b"\n", mode))) == TOKEN
    assert read_token(str(write(tmp_path / "u", TOKEN.encode() + b"\r\n", 0o600))) == TOKEN


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644, 0o660, 0o700 | 0o001])
def test_group_or_other_access_is_refused(tmp_path: Path, mode: int) -> None:
    assert "group and others must have no access" in refused(write(tmp_path / "t", TOKEN.encode(), mode))


def test_size_limit_at_and_past(tmp_path: Path) -> None:
    assert len(read_token(str(write(tmp_path / "at", b"a" * MAX_BYTES)))) == MAX_BYTES
    assert f"larger than {MAX_BYTES} bytes" in refused(write(tmp_path / "past", b"a" * (MAX_BYTES + 1)))


def test_token_length_at_and_below_the_minimum(tmp_path: Path) -> None:
    assert read_token(str(write(tmp_path / "at", b"b" * MIN_CHARS))) == "b" * MIN_CHARS
    assert f"at least {MIN_CHARS}" in refused(write(tmp_path / "short", b"b" * (MIN_CHARS - 1)))


@pytest.mark.parametrize("content", [b"", b"\n", b"two words here and more\n", b"tok\x00en-with-a-nul-byte",
                                     b"line1-aaaaaaaaaaaa\nline2\n", "ünïcode-token-ünïcode".encode()])
def test_anything_but_one_visible_token_is_refused(tmp_path: Path, content: bytes) -> None:
    assert "one token of visible ASCII" in refused(write(tmp_path / "t", content))


def test_symlink_directory_fifo_and_missing_are_refused(tmp_path: Path) -> None:
    target = write(tmp_path / "real", TOKEN.encode())
    (tmp_path / "link").symlink_to(target)
    assert "symbolic link" in refused(tmp_path / "link")
    (tmp_path / "dir").mkdir(mode=0o700)
    assert "not a regular file" in refused(tmp_path / "dir")
    os.mkfifo(tmp_path / "fifo", 0o600)
    assert "not a regular file" in refused(tmp_path / "fifo")
    assert "does not exist" in refused(tmp_path / "missing")


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_a_file_of_another_user_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "t", TOKEN.encode())
    os.chown(path, 4242, 4242)
    assert "owned by uid 4242" in refused(path)


def test_bearer_comparison() -> None:
    assert authorized(f"Bearer {TOKEN}", TOKEN) and authorized(f"bearer {TOKEN}", TOKEN)
    for header in (None, "", TOKEN, f"Basic {TOKEN}", f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", "Bearer ",
                   "Bearer ünï"):
        assert not authorized(header, TOKEN), header


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("0.0.0.0", False), ("::", False), ("10.0.0.5", False), ("example.org", False), ("", False),
])
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
