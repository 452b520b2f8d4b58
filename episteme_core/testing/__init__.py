"""Helpers for tests of episteme and of its plugins: run the real CLI, validate against schemas,
check a component against its contract, build a home, run the crash matrix.

Public so that plugin test suites use the same tools as the kernel's (a plugin's tests may import
``episteme_core.testing`` besides ``episteme_core.api``). Needs the ``test`` extra
(``pip install 'episteme-core[test]'``: pytest, hypothesis, jsonschema); ``strategies`` holds the
hypothesis strategies the laws share.
"""

from __future__ import annotations

from pathlib import Path

from episteme_core.testing.cli import CliResult, invoke, run_cli
from episteme_core.testing.conformance import check_component, sample_document
from episteme_core.testing.crashmatrix import (
    CrashCase,
    CrashReport,
    CrashScenario,
    home_state,
    run_crash_matrix,
)
from episteme_core.testing.sample import (
    SAMPLE_TEXT,
    SampleHome,
    make_sample_home,
    read_chunks,
    read_documents,
    store_snapshot,
    text_in_order,
)
from episteme_core.testing.schemas import schema_dir, validate

try:  # the fixture, for plugin test suites (``from episteme_core.testing import sample_home``)
    import pytest

    @pytest.fixture
    def sample_home(tmp_path: Path) -> SampleHome:
        """A fresh home with one snapshot, its document and its chunks (see ``make_sample_home``)."""
        return make_sample_home(tmp_path / "sample-home")
except ImportError:  # pragma: no cover - pytest is a test dependency
    pass

__all__ = [
    "SAMPLE_TEXT", "CliResult", "CrashCase", "CrashReport", "CrashScenario", "SampleHome",
    "check_component", "home_state", "invoke", "make_sample_home", "read_chunks", "read_documents",
    "run_cli", "run_crash_matrix", "sample_document", "schema_dir", "store_snapshot", "text_in_order",
    "validate",
]
