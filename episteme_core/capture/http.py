"""Bounded HTTP fetching with httpx: redirects checked per hop, retries, a total deadline, byte bounds.

Safety lives below httpx, in the network backend: every connection resolves the host once, refuses
addresses ``netguard`` forbids, connects to the address it checked (so DNS rebinding between the
check and the connect is impossible) and checks the peer again. Every socket read and write is
clamped to the source's deadline, so a body trickling in cannot outlive ``--timeout``.
"""

from __future__ import annotations

import email.utils
import socket
import ssl
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

import attrs

from episteme_core import __version__
from episteme_core.capture.netguard import NetPolicy, refusal
from episteme_core.capture.urls import UrlError, normalise_url
from episteme_core.errors import EpistemeError
from episteme_core.records.inputs import MIB

if TYPE_CHECKING:
    import httpcore
    import httpx

RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
USER_AGENT = f"episteme/{__version__} (snapshot)"
ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
_READ_CHUNK = 64 * 1024


@attrs.frozen
class FetchSettings:
    """The bounds of one snapshot run; every number has a CLI option (see ``docs/capture.md``)."""

    timeout_s: float = 60.0
    read_timeout_s: float = 30.0
    max_bytes: int = 25 * MIB
    retries: int = 2
    max_redirects: int = 10
    policy: NetPolicy = NetPolicy()
    backoff_base_ms: float = 250.0
    backoff_cap_ms: float = 5000.0
    retry_after_cap_s: float = 30.0

    def backoff_s(self, attempt: int) -> float:
        """``min(base·2^attempt, cap)`` milliseconds, as seconds (attempt 0 is the first retry)."""
        return float(min(self.backoff_base_ms * (2**attempt), self.backoff_cap_ms)) / 1000.0


@attrs.frozen
class Fetched:
    """The outcome of a successful fetch: a body, or ``not_modified`` for a 304."""

    url: str
    final_url: str
    status: int
    headers: dict[str, str]
    content: bytes | None
    attempts: int
    redirects: tuple[str, ...] = ()

    @property
    def not_modified(self) -> bool:
        return self.status == 304


class AddressRefused(Exception):
    """The host resolved only to addresses the policy forbids (or the peer turned out to be one)."""

    def __init__(self, host: str, reasons: list[str]) -> None:
        super().__init__(f"{host}: " + "; ".join(reasons))
        self.host = host
        self.reasons = reasons


class DeadlineExceeded(Exception):
    """The source's total time bound passed."""


class Deadline:
    """A monotonic deadline shared by the backend and the fetcher (reset for each source)."""

    def __init__(self) -> None:
        self.at = float("inf")

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def bound(self, timeout: float | None) -> float:
        left = self.remaining()
        if left <= 0:
            raise DeadlineExceeded()
        return left if timeout is None else min(timeout, left)


def _guarded_backend(policy: NetPolicy, deadline: Deadline) -> httpcore.NetworkBackend:
    import httpcore

    class GuardedStream(httpcore.NetworkStream):
        def __init__(self, inner: httpcore.NetworkStream) -> None:
            self.inner = inner

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            return self.inner.read(max_bytes, deadline.bound(timeout))

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self.inner.write(buffer, deadline.bound(timeout))

        def close(self) -> None:
            self.inner.close()

        def start_tls(
            self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
            timeout: float | None = None,
        ) -> httpcore.NetworkStream:
            return GuardedStream(self.inner.start_tls(ssl_context, server_hostname, deadline.bound(timeout)))

        def get_extra_info(self, info: str) -> Any:
            return self.inner.get_extra_info(info)

    class GuardedBackend(httpcore.NetworkBackend):
        def __init__(self) -> None:
            self.plain = httpcore.SyncBackend()

        def connect_tcp(
            self, host: str, port: int, timeout: float | None = None,
            local_address: str | None = None, socket_options: Any = None,
        ) -> httpcore.NetworkStream:
            deadline.bound(timeout)
            try:
                infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except socket.gaierror as exc:
                raise httpcore.ConnectError(f"cannot resolve {host}: {exc.strerror}") from exc
            reasons: list[str] = []
            last_error: Exception | None = None
            for *_, sockaddr in infos:
                address = str(sockaddr[0])
                reason = refusal(address, policy)
                if reason:
                    reasons.append(reason)
                    continue
                try:
                    # Connect to the checked address itself: no second resolution can differ.
                    stream = self.plain.connect_tcp(
                        address, port, deadline.bound(timeout), local_address, socket_options
                    )
                except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                    last_error = exc
                    continue
                sock = stream.get_extra_info("socket")
                peer = str(sock.getpeername()[0]) if sock is not None else address
                late = refusal(peer, policy)
                if late:
                    stream.close()
                    raise AddressRefused(host, [late])
                return GuardedStream(stream)
            if last_error is not None:
                raise last_error
            raise AddressRefused(host, reasons or [f"{host} resolved to no address"])

        def connect_unix_socket(
            self, path: str, timeout: float | None = None, socket_options: Any = None
        ) -> httpcore.NetworkStream:
            raise AddressRefused(path, ["unix sockets are never connected"])

        def sleep(self, seconds: float) -> None:
            time.sleep(seconds)

    return GuardedBackend()


def _client(settings: FetchSettings, deadline: Deadline) -> httpx.Client:
    import certifi
    import httpcore
    import httpx

    class GuardedTransport(httpx.HTTPTransport):
        def __init__(self) -> None:
            super().__init__(trust_env=False)
            ssl_context = ssl.create_default_context(cafile=certifi.where())
            self._pool = httpcore.ConnectionPool(
                ssl_context=ssl_context,
                max_connections=4,
                network_backend=_guarded_backend(settings.policy, deadline),
            )

    return httpx.Client(
        transport=GuardedTransport(),
        follow_redirects=False,
        trust_env=False,  # an environment proxy would bypass the address guard
        # each connect, read and write waits at most this long (and never past the deadline)
        timeout=httpx.Timeout(min(settings.read_timeout_s, settings.timeout_s)),
        headers={"User-Agent": USER_AGENT, "Accept": ACCEPT, "Accept-Encoding": "gzip, deflate"},
    )


class _DeadlineCut(Exception):
    """The source's deadline passed during an attempt (``error`` is the ``LIMIT_EXCEEDED``)."""

    def __init__(self, error: EpistemeError) -> None:
        super().__init__(error.message)
        self.error = error


class _Retry(Exception):
    """A failure worth another attempt, with the error to report if none is left."""

    def __init__(self, error: EpistemeError, retry_after_s: float | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.retry_after_s = retry_after_s


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (delta seconds or an HTTP date); ``None`` if bad."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(int(value))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class _Decoder:
    """Content-Encoding decoding with bounded output per step (a compression bomb stops at the bound)."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._obj: Any = None
        if encoding in ("gzip", "x-gzip"):
            self._wbits = 16 + zlib.MAX_WBITS
        elif encoding == "deflate":
            self._wbits = zlib.MAX_WBITS
        elif encoding in ("", "identity"):
            self._wbits = 0
        else:
            raise EpistemeError(
                "PROCESSING_FAILED", f"unsupported Content-Encoding {encoding!r}",
                details={"contentEncoding": encoding},
            )
        self._first = True

    def feed(self, data: bytes) -> Iterator[bytes]:
        if not self._wbits:
            yield data
            return
        while data:
            if self._obj is None:
                self._obj = zlib.decompressobj(self._wbits)
            try:
                out = self._obj.decompress(data, _READ_CHUNK)
            except zlib.error:
                if self._first and self._wbits == zlib.MAX_WBITS:  # raw deflate without zlib header
                    self._wbits, self._obj = -zlib.MAX_WBITS, None
                    continue
                raise
            self._first = False
            yield out
            if self._obj.eof:  # gzip may hold several members; the rest starts the next one
                data, self._obj = self._obj.unused_data, None
            else:
                data = self._obj.unconsumed_tail

    def flush(self) -> bytes:
        return self._obj.flush() if self._obj is not None else b""

    @property
    def complete(self) -> bool:
        """False when a gzip or deflate stream stopped before its end (the body was cut short)."""
        return self._obj is None or bool(self._obj.eof)


def parse_content_type(value: str | None) -> tuple[str | None, str | None]:
    """``(media type, charset)`` from a Content-Type header, both lower-cased."""
    if not value:
        return None, None
    head, *params = value.split(";")
    media = head.strip().lower() or None
    charset = None
    for param in params:
        key, _, raw = param.partition("=")
        if key.strip().lower() == "charset":
            charset = raw.strip().strip('"').strip().lower() or None
    return media, charset


class Fetcher:
    """One httpx client for a run; ``fetch`` gets one source within the settings' bounds."""

    def __init__(self, settings: FetchSettings, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self.sleep = sleep
        self.deadline = Deadline()
        self._client: httpx.Client | None = None

    def __enter__(self) -> Fetcher:
        self._client = _client(self.settings, self.deadline)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def fetch(
        self,
        url: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        on_retry: Callable[[int, float, str], None] | None = None,
    ) -> Fetched:
        """GET ``url`` (conditionally when validators are known), retrying what is worth retrying.

        The deadline covers every attempt, every backoff and every body byte.
        """
        settings = self.settings
        self.deadline.at = time.monotonic() + settings.timeout_s
        attempt = 0
        last: _Retry | None = None
        while True:
            try:
                return self._attempt(url, etag, last_modified, attempt + 1)
            except _DeadlineCut as cut:
                # The deadline ended a retry of a failure worth retrying (a read timeout, a 503):
                # report that failure, retryable, rather than the time bound.
                if last is not None:
                    raise last.error from None
                raise cut.error from None
            except _Retry as retry:
                last = retry
                if attempt >= settings.retries:
                    raise retry.error from None
                if retry.retry_after_s is not None:
                    wait = min(retry.retry_after_s, settings.retry_after_cap_s)
                else:
                    wait = settings.backoff_s(attempt)
                if wait >= self.deadline.remaining():
                    raise retry.error from None
                attempt += 1
                if on_retry is not None:
                    on_retry(attempt, wait, retry.error.message)
                self.sleep(wait)

    def _attempt(self, url: str, etag: str | None, last_modified: str | None, attempts: int) -> Fetched:
        import httpx

        assert self._client is not None, "use Fetcher as a context manager"
        limit_ms = int(self.settings.timeout_s * 1000)
        current = url
        chain: list[str] = [url]
        headers: dict[str, str] = {}
        if etag:
            headers["If-None-Match"] = etag
        elif last_modified:
            headers["If-Modified-Since"] = last_modified
        try:
            while True:
                request = self._client.build_request("GET", current, headers=headers)
                response = self._client.send(request, stream=True)
                try:
                    status = response.status_code
                    location = response.headers.get("location")
                    if status in REDIRECT_STATUSES and location:
                        current = self._next_hop(url, current, location, chain)
                        continue
                    if status == 304:
                        hops = tuple(chain[1:])
                        return Fetched(url, current, 304, _headers(response), None, attempts, hops)
                    if status in RETRY_STATUSES:
                        raise _Retry(
                            _unavailable(url, f"HTTP {status}", status=status),
                            parse_retry_after(response.headers.get("retry-after")),
                        )
                    if not 200 <= status < 300:
                        raise _unavailable(url, f"HTTP {status}", status=status)
                    body = self._read_body(url, response)
                    return Fetched(url, current, status, _headers(response), body, attempts, tuple(chain[1:]))
                finally:
                    response.close()
        except AddressRefused as exc:
            raise EpistemeError(
                "INVALID_INPUT", f"{url}: refused to connect to {exc}",
                details={"url": url, "at": current, "kind": "address", "reasons": exc.reasons},
                hint="only public addresses are fetched unless --allow-localhost / --allow-private-networks",
            ) from None
        except DeadlineExceeded:
            raise _DeadlineCut(_time_limit(url, limit_ms)) from None
        except httpx.TimeoutException as exc:
            if self.deadline.remaining() <= 0.001:
                raise _DeadlineCut(_time_limit(url, limit_ms)) from exc
            name = type(exc).__name__
            read_ms = int(self.settings.read_timeout_s * 1000)
            raise _Retry(_unavailable(
                url, f"timed out: no response within --read-timeout {read_ms} ms ({name})",
                transport=name, kind="read-timeout", readTimeoutMs=read_ms,
            )) from exc
        except (httpx.UnsupportedProtocol, httpx.InvalidURL, UnicodeError) as exc:
            raise EpistemeError(
                "INVALID_INPUT", f"{url}: cannot be requested: {exc}", details={"url": url, "at": current},
            ) from exc
        except httpx.TransportError as exc:
            reason = str(exc) or type(exc).__name__
            name = type(exc).__name__
            raise _Retry(_unavailable(url, f"transport error: {reason}", transport=name)) from exc

    def _next_hop(self, url: str, current: str, location: str, chain: list[str]) -> str:
        target = urljoin(current, location.strip())
        try:
            normalised, _ = normalise_url(target)
        except UrlError as exc:
            raise EpistemeError(
                "INVALID_INPUT", f"{url}: redirect to {target!r} refused: {exc}",
                details={"url": url, "at": current, "location": target, "kind": "redirect"},
            ) from None
        if normalised in chain:
            raise EpistemeError(
                "LIMIT_EXCEEDED", f"{url}: redirect loop ({current} -> {normalised})",
                details={"url": url, "kind": "redirects", "loop": True, "chain": [*chain, normalised]},
            )
        if len(chain) > self.settings.max_redirects:
            raise EpistemeError(
                "LIMIT_EXCEEDED", f"{url}: more than {self.settings.max_redirects} redirects",
                details={"url": url, "kind": "redirects", "limit": self.settings.max_redirects,
                         "chain": chain},
            )
        chain.append(normalised)
        return normalised

    def _read_body(self, url: str, response: httpx.Response) -> bytes:
        limit = self.settings.max_bytes
        declared = response.headers.get("content-length")
        if declared and declared.strip().isdigit() and int(declared) > limit:
            raise _too_large(url, "wire", limit, int(declared))
        decoder = _Decoder(response.headers.get("content-encoding", "").strip().lower())
        parts: list[bytes] = []
        wire = decoded = 0
        try:
            for raw in response.iter_raw(_READ_CHUNK):
                wire += len(raw)
                if wire > limit:
                    raise _too_large(url, "wire", limit, wire)
                for piece in decoder.feed(raw):
                    decoded += len(piece)
                    if decoded > limit:
                        raise _too_large(url, "decoded", limit, decoded)
                    parts.append(piece)
                self.deadline.bound(None)
            tail = decoder.flush()
        except zlib.error as exc:
            raise EpistemeError(
                "PROCESSING_FAILED", f"{url}: cannot decode the {decoder.encoding} body: {exc}",
                details={"url": url, "contentEncoding": decoder.encoding},
            ) from exc
        if not decoder.complete:
            # The connection closed inside the compressed stream: never store a cut body as whole.
            raise _Retry(_unavailable(
                url, f"the {decoder.encoding} body ended before its end ({wire} bytes received; "
                     "cut short in transit)",
                kind="truncated", contentEncoding=decoder.encoding, bytes=wire,
            ))
        decoded += len(tail)
        if decoded > limit:
            raise _too_large(url, "decoded", limit, decoded)
        parts.append(tail)
        return b"".join(parts)


def _headers(response: httpx.Response) -> dict[str, str]:
    return {key.lower(): value for key, value in response.headers.items()}


def _unavailable(url: str, reason: str, **details: Any) -> EpistemeError:
    return EpistemeError(
        "SOURCE_UNAVAILABLE", f"{url}: {reason}", details={"url": url, **details},
    )


def _time_limit(url: str, limit_ms: int) -> EpistemeError:
    return EpistemeError(
        "LIMIT_EXCEEDED", f"{url}: not complete within --timeout {limit_ms} ms",
        details={"url": url, "kind": "time", "limitMs": limit_ms},
        hint="raise --timeout if this source is slow",
    )


def _too_large(url: str, kind: str, limit: int, seen: int) -> EpistemeError:
    return EpistemeError(
        "LIMIT_EXCEEDED", f"{url}: {kind} body larger than --max-bytes {limit}",
        details={"url": url, "kind": kind, "limit": limit, "bytes": seen},
        hint="raise --max-bytes if this source is expected to be this large",
    )


def header(headers: Mapping[str, str], name: str) -> str | None:
    return headers.get(name.lower())
