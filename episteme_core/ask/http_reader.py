"""The builtin ``http`` reader: any server speaking the HTTP reader protocol (llama-server, vLLM,
the reference server).

``GET /health`` before a run; ``POST /v1/episteme/run`` with the run's shard names (404 or a
refused connection is ignored); one ``POST /v1/chat/completions`` per shard asking for structured
output, whose message content must hold ``{"ids": [...]}``. Replies are read as a stream and cut
at ``max_reply_bytes`` and at the read's total deadline, so a huge or trickling reply fails cleanly.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from typing import Any

from episteme_core.ask import protocol
from episteme_core.ask.base_reader import BaseReader
from episteme_core.records.reading import ReadError, ReaderSpec, ReadReply, ReadRequest

HEALTH_TIMEOUT = 5.0


def base_url(url: str) -> str:
    """The server root: a trailing ``/`` and a trailing ``/v1`` are dropped."""
    root = url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


class HttpReader(BaseReader):
    kind = "http"

    def __init__(self, spec: ReaderSpec) -> None:
        import httpx

        super().__init__(spec)
        self.url = base_url(str(spec.options["url"]))
        self.model = str(spec.options.get("model", "episteme-reader"))
        self.max_reply_bytes = int(spec.options.get("max_reply_bytes", 1 << 20))
        headers = {"User-Agent": "episteme-reader"}
        env = spec.options.get("api_key_env")
        if env and os.environ.get(str(env)):
            headers["Authorization"] = f"Bearer {os.environ[str(env)]}"
        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(self.timeout),
            limits=httpx.Limits(max_connections=self.slots + 2, max_keepalive_connections=self.slots + 2),
            follow_redirects=False,
            trust_env=False,
            verify=self.url.startswith("https://"),  # plain http needs no CA bundle (saves ~30 ms)
        )

    def _request(self, method: str, path: str, body: Any, timeout: float) -> tuple[int, bytes]:
        """One bounded exchange: status and at most ``max_reply_bytes`` of body, within ``timeout``."""
        import httpx

        deadline = time.monotonic() + timeout
        try:
            with self._client.stream(
                method, self.url + path, json=body, timeout=httpx.Timeout(timeout)
            ) as response:
                declared = response.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > self.max_reply_bytes:
                    raise ReadError(f"reply of {int(declared)} bytes is larger than {self.max_reply_bytes}")
                buffer = bytearray()
                for piece in response.iter_bytes():
                    buffer += piece
                    if len(buffer) > self.max_reply_bytes:
                        raise ReadError(f"reply larger than {self.max_reply_bytes} bytes")
                    if time.monotonic() > deadline:
                        raise ReadError(f"timed out after {timeout:g} s")
                return response.status_code, bytes(buffer)
        except httpx.TimeoutException as exc:
            raise ReadError(f"timed out after {timeout:g} s") from exc
        except httpx.HTTPError as exc:
            raise ReadError(f"{type(exc).__name__}: {exc}") from exc

    def health(self) -> None:
        status, _ = self._request("GET", "/health", None, min(self.timeout, HEALTH_TIMEOUT))
        if status != 200:
            raise ReadError(f"GET /health answered {status}")

    def begin_run(self, question: str, shards: Sequence[str]) -> None:
        """Tell the server the run's shards. 404 and a refused connection mean "not supported" and
        are ignored; any other failure is a ReadError, which the pool reports as a warning."""
        import httpx

        try:
            status, _ = self._request(
                "POST", "/v1/episteme/run", {"question": question, "shards": list(shards)},
                min(self.timeout, HEALTH_TIMEOUT),
            )
        except ReadError as exc:
            if isinstance(exc.__cause__, httpx.ConnectError):
                return
            raise
        if status != 404 and not 200 <= status < 300:
            raise ReadError(f"POST /v1/episteme/run answered {status}")

    def read(self, request: ReadRequest) -> ReadReply:
        body = {
            "model": self.model,
            "messages": protocol.messages(request),
            "temperature": 0,
            "max_tokens": 16 + 8 * len(request.candidates),
            "response_format": protocol.response_format(request.labels),
        }
        status, raw = self._request("POST", "/v1/chat/completions", body, self.timeout)
        if status != 200:
            raise ReadError(f"POST /v1/chat/completions answered {status}")
        return ReadReply(labels=tuple(parse_completion(raw)))

    def close(self) -> None:
        self._client.close()


def parse_completion(raw: bytes) -> list[Any]:
    """The ids in an OpenAI chat completion body; ReadError when the body or content holds none."""
    try:
        body = json.loads(raw.decode("utf-8"))
        message = body["choices"][0]["message"]
        content = message.get("content")
    except (ValueError, UnicodeDecodeError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ReadError("reply is not an OpenAI chat completion") from exc
    if isinstance(content, list):  # content parts
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        raise ReadError("reply message has no text content")
    ids = protocol.extract_ids(content)
    if ids is None:
        raise ReadError('reply content holds no {"ids": [...]} object')
    return ids


class HttpKind:
    """Factory registered as the reader kind ``http``."""

    name = "http"
    description = "a server speaking the HTTP reader protocol (llama-server, vLLM, the reference server)"

    def open(self, spec: ReaderSpec) -> HttpReader:
        if "url" not in spec.options:
            from episteme_core.errors import EpistemeError

            raise EpistemeError(
                "INVALID_USAGE", f"reader {spec.name!r} of kind http has no url",
                hint='add {"name": ..., "url": "http://host:port"} to "readers" in config.json '
                     "and pass that name to --reader",
            )
        return HttpReader(spec)
