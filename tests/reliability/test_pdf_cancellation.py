"""SIGTERM and SIGINT during PDF extraction cancel the run (143/130): nothing is committed and the
previous document stays, instead of the signal becoming a "partial" document (issue 12)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from episteme_core.errors import Cancelled, clear_cancel
from episteme_core.extract.pdf import PdfExtractor

from . import hostile
from .extracting import request


# The alarm's handler raises wherever the interpreter is; where that is a garbage collector
# callback (hypothesis registers one), Python can only print the exception as unraisable, and pytest
# turns that print into a warning. That landing place is one this test means to reach, not a fault.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_signal_raised_inside_pdfminer_is_not_a_diagnostic() -> None:
    """Wherever the handler's exception lands (pdfminer, a page's except clause, even a garbage
    collector callback that swallows it), the extraction ends in Cancelled, not in a document."""
    from episteme_core.extract.run import _run_extractor

    data = hostile.pdf_pages(40)

    def cancel(signum: int, frame: object) -> None:
        raise Cancelled("SIGTERM")

    previous = signal.signal(signal.SIGALRM, cancel)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        with pytest.raises(Cancelled):
            _run_extractor(PdfExtractor(), request(data, "application/pdf"), "https://example.org/x")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        clear_cancel()


def test_a_cancellation_an_extractor_swallowed_still_cancels_the_run() -> None:
    """Wherever a handler's exception lands, a library may catch it; the recorded request wins."""
    from episteme_core.extract.run import _run_extractor

    class Swallowing:
        name = "swallowing"

        def extract(self, req: object) -> object:
            try:
                raise Cancelled("SIGTERM")  # as a signal handler would, deep inside a library
            except Exception:
                return "a document that must never be committed"

    try:
        with pytest.raises(Cancelled) as caught:
            _run_extractor(Swallowing(), request(b"", "application/pdf"), "https://example.org/x")
        assert caught.value.details == {"signal": "SIGTERM"}
    finally:
        clear_cancel()


def _ingest(home: Path, folder: Path) -> None:
    map_path = folder / "map.json"
    map_path.write_text(json.dumps([
        {"sourceUrl": "https://example.org/a-notes", "localPath": "a.txt"},
        {"sourceUrl": "https://example.org/b.pdf", "localPath": "b.pdf"},
    ]))
    proc = subprocess.run([sys.executable, "-m", "episteme_core", "--home", str(home), "manual-ingest",
                           "--map", str(map_path)], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(("sig", "status", "ignored"), [
    (signal.SIGTERM, 143, False), (signal.SIGINT, 130, False),
    (signal.SIGINT, 130, True),  # started ignoring SIGINT, as a job started with '&' by a script is
])
def test_a_signal_during_pdf_extraction_cancels_and_keeps_the_previous_document(
    tmp_path: Path, home: Path, sig: signal.Signals, status: int, ignored: bool
) -> None:
    (tmp_path / "a.txt").write_text("notes, extracted first\n")
    (tmp_path / "b.pdf").write_bytes(hostile.pdf_pages(1))
    _ingest(home, tmp_path)
    first = subprocess.run([sys.executable, "-m", "episteme_core", "--home", str(home), "extract"],
                           capture_output=True, timeout=120)
    assert first.returncode == 0, first.stderr
    index = home / "documents" / "index.json"
    before = index.read_bytes()
    (tmp_path / "b.pdf").write_bytes(hostile.pdf_pages(60))  # a new snapshot, slow to extract
    _ingest(home, tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "episteme_core", "--home", str(home), "--json", "--progress", "always",
         "extract", "--force"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ},
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignored else None,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()  # the text source is done: the PDF is being read now
    assert b"a-notes" in line, line
    time.sleep(0.5)
    proc.send_signal(sig)
    _, rest = proc.communicate(timeout=120)
    assert proc.returncode == status, rest.decode()[-2000:]
    envelope = json.loads(rest.decode().strip().splitlines()[-1])
    assert envelope["error"]["code"] == "CANCELLED"
    assert index.read_bytes() == before  # nothing committed: the previous document stands
    assert not (home / "writer.lock").exists()
    verify = subprocess.run([sys.executable, "-m", "episteme_core", "--home", str(home), "verify"],
                            capture_output=True, timeout=120)
    assert verify.returncode == 0, verify.stdout
