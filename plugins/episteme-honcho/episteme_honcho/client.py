"""A read-only Honcho v3 client: paged POST ``.../list`` endpoints, retries, bounds, no leaked key.

The API key goes only into the ``Authorization`` header. Every message this module produces passes
through ``Redactor`` first, and exceptions are raised without their httpx cause, so neither
errors, ``--debug`` cause chains, warnings nor logs can carry the key.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote, urlsplit

import attrs

from episteme_core.api import EpistemeError

MAX_RESPONSE_BYTES = 16 * 1024 * 1024
RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
MAX_BACKOFF_S = 5.0


@attrs.frozen
class Redactor:
    """Removes the secret (and any credentials in the base URL) from text before it leaves."""

    secret: str

    def __call__(self, text: str) -> str:
        if self.secret:
            text = text.replace(self.secret, "[redacted]")
        return text


def public_base(url: str) -> str:
    """``scheme://host[:port]/path`` without user info: what messages may name."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"


@attrs.define
class HonchoClient:
    """Walks workspaces, sessions and messages of a Honcho server (API v3)."""

    base_url: str
    api_key: str
    timeout_s: float = 30.0
    retries: int = 2
    page_size: int = 100
    max_pages: int = 10_000
    backoff_s: float = 0.25
    sleep: Callable[[float], None] = time.sleep
    redact: Redactor = attrs.field(init=False)
    _client: Any = attrs.field(init=False, default=None)

    def __attrs_post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EpistemeError(
                "INVALID_USAGE", "HONCHO_BASE_URL must be an http(s) URL such as http://localhost:8000",
            )
        self.redact = Redactor(self.api_key)

    def __enter__(self) -> HonchoClient:
        import httpx

        self._client = httpx.Client(
            timeout=self.timeout_s, follow_redirects=False, trust_env=False,
            headers={"Authorization": f"Bearer {self.api_key}", "Accept": "application/json"},
        )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # one request ------------------------------------------------------------------------

    def _fail(self, code: str, message: str, endpoint: str, **details: Any) -> EpistemeError:
        return EpistemeError(
            code,
            self.redact(message),
            details={
                "endpoint": self.redact(endpoint),
                "server": self.redact(public_base(self.base_url)),
                **{k: self.redact(v) if isinstance(v, str) else v for k, v in details.items()},
            },
            hint=self.redact("check HONCHO_BASE_URL and that the server is up; the run can be retried")
            if code == "SOURCE_UNAVAILABLE" else None,
        )

    def post(self, path: str, params: dict[str, Any]) -> Any:
        """POST ``{"filters": {}}`` to ``path``; JSON back, after retries; errors are redacted."""
        import httpx

        assert self._client is not None, "use HonchoClient as a context manager"
        url = self.base_url.rstrip("/") + path
        endpoint = f"POST {path}"
        attempt = 0
        while True:
            delay: float | None = None
            try:
                with self._client.stream("POST", url, params=params, json={"filters": {}}) as response:
                    status = response.status_code
                    if status in (401, 403):
                        raise EpistemeError(
                            "INVALID_USAGE",
                            f"the Honcho server refused the API key (HTTP {status}) at {endpoint}",
                            details={"endpoint": endpoint, "status": status},
                            hint="check HONCHO_API_KEY (listing workspaces needs an admin key; "
                                 "a workspace key can pass --workspace)",
                        )
                    if status in RETRY_STATUSES:
                        delay = self._retry_after(response.headers.get("retry-after"))
                        reason = f"HTTP {status}"
                    elif status == 404:
                        raise self._fail("INVALID_INPUT", f"{endpoint}: not found (HTTP 404)", endpoint,
                                         status=status)
                    elif status >= 400:
                        raise self._fail("SOURCE_UNAVAILABLE", f"{endpoint}: HTTP {status}", endpoint,
                                         status=status)
                    else:
                        body = self._read_bounded(response, endpoint)
                        return self._parse(body, endpoint)
            except httpx.TimeoutException:
                reason = f"no answer within {self.timeout_s:g} s"
            except httpx.TransportError as exc:
                reason = f"cannot reach the server ({type(exc).__name__})"
            if attempt >= self.retries:
                raise self._fail(
                    "SOURCE_UNAVAILABLE",
                    f"{endpoint} at {public_base(self.base_url)}: {reason}, after {attempt + 1} attempt(s)",
                    endpoint, attempts=attempt + 1,
                ) from None
            attempt += 1
            backoff = self.backoff_s * 2 ** (attempt - 1)
            self.sleep(min(MAX_BACKOFF_S, delay if delay is not None else backoff))

    def _retry_after(self, value: str | None) -> float | None:
        if value and value.strip().isdigit():
            return min(MAX_BACKOFF_S, float(value.strip()))
        return None

    def _read_bounded(self, response: Any, endpoint: str) -> bytes:
        chunks: list[bytes] = []
        total = 0
        for chunk in response.iter_bytes():
            total += len(chunk)
            if total > MAX_RESPONSE_BYTES:
                raise self._fail(
                    "LIMIT_EXCEEDED", f"{endpoint}: response larger than {MAX_RESPONSE_BYTES} bytes",
                    endpoint, limit=MAX_RESPONSE_BYTES,
                )
            chunks.append(chunk)
        return b"".join(chunks)

    def _parse(self, body: bytes, endpoint: str) -> Any:
        try:
            return json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise self._fail(
                "SOURCE_UNAVAILABLE", f"{endpoint}: the server sent malformed JSON", endpoint
            ) from None

    # paging ------------------------------------------------------------------------------

    def pages(self, path: str) -> Iterator[list[dict[str, Any]]]:
        """Every page's items, following ``page``/``pages`` until the last; bounded and checked."""
        page = 1
        previous_ids: list[Any] | None = None
        while True:
            if page > self.max_pages:
                raise self._fail(
                    "SOURCE_UNAVAILABLE",
                    f"POST {path}: more than {self.max_pages} pages (a listing that never ends?)",
                    f"POST {path}", maxPages=self.max_pages,
                )
            data = self.post(path, {"page": page, "size": self.page_size})
            items, pages = self._check_page(data, path, page)
            ids = [item.get("id") for item in items]
            if items and ids == previous_ids:
                raise self._fail("SOURCE_UNAVAILABLE", f"POST {path}: page {page} repeats the page before it",
                                 f"POST {path}", page=page)
            previous_ids = ids
            yield items
            if not items or pages is None or page >= pages:
                return
            page += 1

    def _check_page(self, data: Any, path: str, page: int) -> tuple[list[dict[str, Any]], int | None]:
        endpoint = f"POST {path}"
        if not isinstance(data, dict) or not isinstance(data.get("items"), list):
            raise self._fail("SOURCE_UNAVAILABLE", f"{endpoint}: not a page (no items list)", endpoint)
        pages = data.get("pages")
        if pages is not None and (not isinstance(pages, int) or isinstance(pages, bool) or pages < 0):
            raise self._fail("SOURCE_UNAVAILABLE", f"{endpoint}: 'pages' is not a number", endpoint)
        got = data.get("page")
        if got is not None and got != page:
            raise self._fail("SOURCE_UNAVAILABLE", f"{endpoint}: asked for page {page}, got page {got!r}",
                             endpoint, page=page)
        items = [item for item in data["items"] if isinstance(item, dict)]
        if len(items) != len(data["items"]):
            raise self._fail(
                "SOURCE_UNAVAILABLE", f"{endpoint}: page {page} holds items that are not objects",
                endpoint, page=page,
            )
        return items, pages

    # the objects -------------------------------------------------------------------------

    def workspaces(self) -> list[str]:
        return [str(item["id"]) for items in self.pages("/v3/workspaces/list") for item in items
                if isinstance(item.get("id"), str)]

    def sessions(self, workspace: str) -> list[dict[str, Any]]:
        path = f"/v3/workspaces/{quote(workspace, safe='')}/sessions/list"
        return [item for items in self.pages(path) for item in items]

    def iter_messages(self, workspace: str, session: str) -> Iterator[dict[str, Any]]:
        """A session's messages a page at a time (a run can stop at its byte bound mid-session)."""
        path = f"/v3/workspaces/{quote(workspace, safe='')}/sessions/{quote(session, safe='')}/messages/list"
        for items in self.pages(path):
            yield from items
