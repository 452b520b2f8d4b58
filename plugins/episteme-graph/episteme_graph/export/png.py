"""The graph as a PNG: the SVG picture (``svg.py``) rasterised by headless Chromium when one is at
hand (``$EPISTEME_CHROMIUM``, else ``chromium``, ``chromium-browser`` or ``google-chrome`` on PATH), else
by cairosvg when it is installed; with neither, a PROCESSING_FAILED error that says what to install.
The same graph gives the same bytes with the same renderer (the pixels are the renderer's)."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from episteme_graph.export import layout as lay
from episteme_graph.export import svg

MAX_SIDE = 4096  # pixels: a larger picture is scaled down to fit
TIMEOUT = 180.0
_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def find_chromium() -> str | None:
    """The Chromium to render with: ``$EPISTEME_CHROMIUM`` when set (and only it), else the first
    of the usual names on PATH."""
    named = os.environ.get("EPISTEME_CHROMIUM")
    if named is not None:
        return named if os.path.isfile(named) and os.access(named, os.X_OK) else None
    for name in _BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


def cairosvg_module() -> Any:
    """The cairosvg module, or None when it (or the cairo library it loads) is missing."""
    try:
        import cairosvg  # type: ignore[import-not-found,unused-ignore]
    except (ImportError, OSError):  # OSError: the package is there but its libcairo is not
        return None
    return cairosvg


def _error(message: str, **details: Any) -> Exception:
    from episteme_core.api import EpistemeError

    return EpistemeError(
        "PROCESSING_FAILED",
        message,
        details=details or None,
        hint="Install Chromium (or set EPISTEME_CHROMIUM to its path) or `pip install cairosvg`, "
        "or export --format svg, which needs neither.",
    )


def _with_chromium(chromium: str, picture: bytes, width: int, height: int) -> bytes:
    with tempfile.TemporaryDirectory(prefix="episteme-graph-png-") as folder:
        work = Path(folder)
        source = work / "graph.svg"
        target = work / "graph.png"
        source.write_bytes(picture)
        command = [
            chromium,
            "--headless",
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--host-resolver-rules=MAP * ~NOTFOUND",  # the picture needs no network, so none is reachable
            f"--user-data-dir={work / 'profile'}",
            f"--window-size={width},{height}",
            f"--screenshot={target}",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.append("--no-sandbox")  # Chromium refuses to sandbox itself as root
        command.append(source.as_uri())
        try:
            proc = subprocess.run(
                command,
                cwd=work,
                env={**os.environ, "HOME": str(work)},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=TIMEOUT,
            )
        except subprocess.TimeoutExpired as exc:
            raise _error(
                f"Chromium did not render the picture within {TIMEOUT:.0f} s", renderer=chromium
            ) from exc
        except OSError as exc:
            raise _error(f"Chromium could not be started: {exc}", renderer=chromium) from exc
        data = target.read_bytes() if target.is_file() else b""
        if proc.returncode != 0 or not data.startswith(_PNG_SIGNATURE):
            tail = proc.stderr.decode("utf-8", "replace")[-2000:]
            raise _error(
                f"Chromium did not render the picture (exit status {proc.returncode})",
                renderer=chromium,
                stderr=tail,
            )
        return data


def render(graph: dict[str, Any], options: dict[str, Any]) -> bytes:
    placed = lay.layout(graph)
    width, height = svg.picture_size(placed)
    scale = min(1.0, MAX_SIDE / max(width, height))
    pixels = (max(1, math.ceil(width * scale)), max(1, math.ceil(height * scale)))
    picture = svg.render_layout(graph, placed, size=pixels).encode("utf-8")
    chromium = find_chromium()
    if chromium is not None:
        return _with_chromium(chromium, picture, *pixels)
    cairosvg = cairosvg_module()
    if cairosvg is not None:
        data: bytes = cairosvg.svg2png(bytestring=picture, output_width=pixels[0], output_height=pixels[1])
        return data
    named = os.environ.get("EPISTEME_CHROMIUM")
    raise _error(
        "no PNG renderer: "
        + (
            f"EPISTEME_CHROMIUM={named} is not an executable file"
            if named is not None
            else "no Chromium on PATH"
        )
        + " and cairosvg is not installed",
        renderer=None,
    )
