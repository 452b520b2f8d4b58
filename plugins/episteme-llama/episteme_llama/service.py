"""The library side of ``episteme reader serve`` and ``episteme reader check``.

``serve`` opens one llama reader (its slots are parallel contexts over one loaded model), listens,
and returns when ``stop`` is set or the process is interrupted. ``check`` loads a model, says where it
runs (CPU or GPU, how many layers offloaded, what llama.cpp was built with) and times one read.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from episteme_core.api import Candidate, EpistemeError, ReaderSpec, ReadRequest, accept_stop_signal
from episteme_llama.options import LlamaOptions
from episteme_llama.reader import LlamaReader, open_reader
from episteme_llama.server import ReaderServer, ServeSettings
from episteme_llama.token_file import is_loopback, read_token


def settings_for(host: str, port: int, token_file: str | None, max_body: int, slots: int) -> ServeSettings:
    """Where to listen; a non-loopback host without a token file is INVALID_USAGE."""
    token = read_token(token_file) if token_file else None
    if token is None and not is_loopback(host):
        raise EpistemeError(
            "INVALID_USAGE", f"--host {host} is not a loopback address; serving it needs --token-file",
            details={"host": host},
            hint="clients then send the token as a bearer token (api_key_env in their config.json)",
        )
    return ServeSettings(host=host, port=port, token=token, max_body=max_body,
                         max_connections=max(8, 4 * slots))


def serve(options: LlamaOptions, settings: ServeSettings, *, slots: int, timeout: float,
          announce: Callable[[dict[str, Any]], None], stop: threading.Event | None = None) -> dict[str, Any]:
    """Serve until ``stop`` is set (or KeyboardInterrupt / the CLI's Cancelled); what was served."""
    spec = ReaderSpec(name="serve", kind="llama", slots=slots, timeout=timeout)
    reader = open_reader(spec, options)
    started = time.monotonic()
    try:
        try:
            server = ReaderServer(reader, settings)
        except OSError as exc:
            raise EpistemeError(
                "RESOURCE_BUSY", f"cannot listen on {settings.host}:{settings.port}: {exc.strerror or exc}",
                details={"host": settings.host, "port": settings.port},
                hint="choose another --port (0 picks a free one)",
            ) from exc
        stopped = "stop"
        with server:
            # announced inside the try: a client may stop the service as soon as it reads the
            # line, before this thread runs again, and that is a stop, never a cancelled serve
            try:
                announce({"event": "listening", "url": server.url, **reader.describe(),
                          "auth": "bearer" if settings.token else "loopback"})
                while not (stop.wait(0.2) if stop is not None else _sleep(0.2)):
                    pass
            except KeyboardInterrupt:
                stopped = accept_stop_signal() or "SIGINT"
            except EpistemeError as exc:  # the CLI turns SIGTERM into Cancelled
                if exc.code != "CANCELLED":
                    raise
                stopped = accept_stop_signal() or str((exc.details or {}).get("signal", "CANCELLED"))
        return {"url": server.url, "stopped": stopped, "seconds": round(time.monotonic() - started, 3),
                "peakSlotsBusy": reader.peak_busy,
                **server.stats, "reader": reader.describe()}
    finally:
        reader.close()


def _sleep(seconds: float) -> bool:
    time.sleep(seconds)
    return False


def sample_request(candidates: int = 8) -> ReadRequest:
    """A fixed read for timing: one question and ``candidates`` paragraphs of about 100 tokens."""
    question = "Which directive tells the browser where to send reports of policy violations?"
    base = ("The report-to directive names a reporting group to which the user agent sends violation "
            "reports. Older deployments used report-uri, which is deprecated but still honoured when "
            "report-to is absent. Paragraph {k} repeats this so that every candidate has the same length, "
            "and only its number differs from the others in the list.")
    return ReadRequest(question=question, shard="check", source="check", candidates=tuple(
        Candidate(label=f"p{k}", text=base.format(k=k), score=float(candidates - k + 1), ref=f"check#{k}")
        for k in range(1, candidates + 1)))


def check(options: LlamaOptions, *, candidates: int = 8, timeout: float = 600.0) -> dict[str, Any]:
    """Load the model, time one read of ``candidates`` paragraphs, and say where it ran."""
    from episteme_llama import engine

    spec = ReaderSpec(name="check", kind="llama", slots=1, timeout=timeout)
    started = time.monotonic()
    reader: LlamaReader = open_reader(spec, options)
    loaded = time.monotonic()
    try:
        request = sample_request(candidates)
        reply = reader.read(request)
        done = time.monotonic()
        tokens = reader.decoded_tokens()
        return {
            **reader.describe(),
            "gpuOffloadSupported": engine.gpu_offload_supported(),
            "llamaCpp": engine.system_info(),
            "loadSeconds": round(loaded - started, 3),
            "readSeconds": round(done - loaded, 3),
            "tokens": tokens,
            "tokensPerSecond": round(tokens / max(done - loaded, 1e-9), 1),
            "labels": list(reply.labels),
        }
    finally:
        reader.close()
