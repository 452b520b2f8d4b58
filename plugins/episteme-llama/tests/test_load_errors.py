"""A model that cannot be loaded is a clear error with its real cause, never a crash or a bare
"failed to load": a missing file, a directory, a file that is not GGUF, a truncated or corrupt GGUF,
an architecture llama.cpp does not know, and bad options."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.api import EpistemeError, ReaderSpec
from episteme_llama.gguf_header import GgufError, read_header
from episteme_llama.reader import open_reader
from episteme_llama.testing import build_tiny_gguf


def opening(model: str | Path, **options: object) -> EpistemeError:
    spec = ReaderSpec(name="local", kind="llama", options={"model": str(model), **options})
    with pytest.raises(EpistemeError) as caught:
        open_reader(spec).close()
    return caught.value


def test_header_of_the_tiny_model(tiny_model: Path) -> None:
    info = read_header(tiny_model)
    assert (info.version, info.architecture, info.context_length()) == (3, "llama", 2048)
    assert info.chat_template and "<|im_start|>" in info.chat_template
    assert info.tensors == 21


def test_missing_file_and_directory(tmp_path: Path) -> None:
    error = opening(tmp_path / "nope.gguf")
    assert error.code == "INVALID_INPUT" and "does not exist" in error.message and error.hint
    error = opening(tmp_path)
    assert error.code == "INVALID_INPUT" and "not a regular file" in error.message


@pytest.mark.parametrize("content", [b"", b"GGU", b"hello, this is a text file\n",
                                     b"\x7fELF\x02\x01\x01\x00"])
def test_a_file_that_is_not_gguf_is_invalid_input(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(content)
    error = opening(path)
    assert error.code == "INVALID_INPUT" and "not a GGUF file" in error.message, error.message
    assert error.exit_status == 3


def test_truncated_header_is_named(tiny_model: Path, tmp_path: Path) -> None:
    path = tmp_path / "cut.gguf"
    path.write_bytes(tiny_model.read_bytes()[:300])
    with pytest.raises(GgufError, match="truncated or corrupt"):
        read_header(path)
    error = opening(path)
    assert error.code == "INVALID_INPUT" and "truncated or corrupt" in error.message


def test_truncated_tensor_data_gives_llama_cpps_reason(tiny_model: Path, tmp_path: Path) -> None:
    data = tiny_model.read_bytes()
    path = tmp_path / "short.gguf"
    path.write_bytes(data[: len(data) - 4096])  # the header is whole, the last tensor is not
    error = opening(path)
    assert error.code == "INVALID_INPUT"
    assert "failed to load" in error.message and "no reason logged" not in error.message, error.message


def test_corrupt_lengths_and_versions(tmp_path: Path) -> None:
    cases = {
        "version": b"GGUF" + struct.pack("<IQQ", 7, 0, 0),
        "bigendian": b"GGUF" + struct.pack(">IQQ", 3, 0, 0),
        "keys": b"GGUF" + struct.pack("<IQQ", 3, 0, 1 << 40),
        "string": b"GGUF" + struct.pack("<IQQQ", 3, 0, 1, 1 << 50),
    }
    for name, content in cases.items():
        path = tmp_path / f"{name}.gguf"
        path.write_bytes(content)
        with pytest.raises(GgufError):
            read_header(path)
        assert opening(path).code == "INVALID_INPUT"


def test_unknown_architecture_is_named(tmp_path: Path) -> None:
    path = build_tiny_gguf(tmp_path / "odd.gguf", architecture="tinyllama-from-mars")
    error = opening(path)
    assert error.code == "INVALID_INPUT"
    assert "does not know the architecture 'tinyllama-from-mars'" in error.message, error.message


@pytest.mark.parametrize(("options", "words"), [
    ({"mode": "summarise"}, "mode must be one of"),
    ({"n_ctx": 255}, "n_ctx must be between 256"),
    ({"n_ctx": 1.5}, "n_ctx must be an integer"),
    ({"batch_size": 65}, "batch_size must be between 1 and 64"),
    ({"top": 0}, "top must be between 1 and 50"),
    ({"weight": 1.01}, "weight must be between 0 and 1"),
    ({"weight": True}, "weight must be a number"),
    ({"temperature": 0.7}, "unknown key(s) temperature"),
])
def test_bad_options_are_invalid_input_naming_the_key(tiny_model: Path, options: dict[str, object],
                                                      words: str) -> None:
    error = opening(tiny_model, **options)
    assert error.code == "INVALID_INPUT" and words in error.message, error.message
    assert "reader 'local'" in error.message


def test_limits_at_the_edge_are_accepted(tiny_model: Path) -> None:
    spec = ReaderSpec(name="local", kind="llama", options={
        "model": str(tiny_model), "n_ctx": 256, "batch_size": 64, "top": 50, "weight": 1.0, "threads": 1})
    open_reader(spec).close()


def test_a_reader_entry_without_a_model(tiny_model: Path) -> None:
    with pytest.raises(EpistemeError) as caught:
        open_reader(ReaderSpec(name="llama", kind="llama"))
    assert caught.value.code == "INVALID_INPUT"
    assert "model must be the path of a GGUF file" in caught.value.message


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tail=st.binary(max_size=600), version=st.sampled_from([2, 3]), cut=st.integers(0, 4000))
def test_any_bytes_after_the_magic_are_read_or_refused_cleanly(tmp_path: Path, tiny_model: Path, tail: bytes,
                                                               version: int, cut: int) -> None:
    head = tiny_model.read_bytes()[:cut]
    for content in (b"GGUF" + struct.pack("<I", version) + tail, head + tail):
        path = tmp_path / "fuzz.gguf"
        path.write_bytes(content)
        try:
            read_header(path)
        except GgufError:
            pass
