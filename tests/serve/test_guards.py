"""Safe by default, over real HTTP: the token (401), Host (421) and Origin (403) checks, no CORS, the
body bound (413), methods and paths, malformed JSON-RPC; each a clean refusal, and the server keeps
serving. Nothing here listens beyond 127.0.0.1."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from episteme_core.testing import invoke

from .conftest import Served, mcp_call, start_server

JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
MAX_BODY = 64 * 1024
Token = tuple[str, Path]  # the token and the file that holds it


@pytest.fixture(scope="module")
def token(tmp_path_factory: pytest.TempPathFactory) -> Token:
    value = secrets.token_urlsafe(32)
    path = tmp_path_factory.mktemp("secret") / "token"
    path.write_text(value + "\n", "ascii")
    path.chmod(0o600)
    return value, path


@pytest.fixture(scope="module")
def guarded(example_home: Path, token: Token) -> Iterator[Served]:
    served = start_server(example_home, "--token-file", str(token[1]))
    yield served
    served.stop()


def _auth(token: Token) -> dict[str, str]:
    return {"Authorization": f"Bearer {token[0]}"}


def _post(served: Served, body: bytes | str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(served.url, content=body, headers={**JSON_HEADERS, **(headers or {})}, timeout=30)


def _serving(served: Served, token: Token) -> None:
    """The server still answers a valid request."""
    response = _post(served, json.dumps(LIST_TOOLS), _auth(token))
    assert response.status_code == 200 and response.json()["result"]["tools"]


def _refusal(response: httpx.Response, status: int, code: str) -> dict[str, object]:
    assert response.status_code == status, response.text
    assert not [h for h in response.headers if h.lower().startswith("access-control-")]
    error = response.json()["error"]
    assert response.json()["id"] is None and error["data"]["code"] == code
    return error  # type: ignore[no-any-return]


def test_the_right_token_lets_the_sdk_client_in(guarded: Served, token: Token) -> None:
    result = mcp_call(guarded.url, "sources", {}, headers=_auth(token))
    assert not result.is_error and result.structured_content["records"] == 5


@pytest.mark.parametrize("authorization", [
    None, "", "Bearer", "Bearer wrong-token-of-some-length", "Basic dXNlcjpwYXNz", "Token abc",
])
def test_a_missing_or_wrong_token_is_401(guarded: Served, token: Token,
                                         authorization: str | None) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    response = _post(guarded, json.dumps(LIST_TOOLS), headers)
    _refusal(response, 401, "INVALID_USAGE")
    assert response.headers["www-authenticate"] == 'Bearer realm="episteme"'
    _serving(guarded, token)


def test_the_token_with_one_character_changed_or_added_is_401(guarded: Served, token: Token) -> None:
    value = token[0]
    for wrong in (value[:-1] + ("A" if value[-1] != "A" else "B"), value + "x", value[:-1]):
        _refusal(_post(guarded, json.dumps(LIST_TOOLS), {"Authorization": f"Bearer {wrong}"}), 401,
                 "INVALID_USAGE")
    assert _post(guarded, json.dumps(LIST_TOOLS), {"Authorization": f"bearer  {value}"}).status_code == 200


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def test_the_sdk_client_without_the_token_is_refused(guarded: Served) -> None:
    from mcp.shared.exceptions import MCPError

    with pytest.raises(BaseException) as refused:  # noqa: B017 - the SDK raises inside its task group
        mcp_call(guarded.url, "sources", {})
    errors = [leaf for leaf in _leaves(refused.value) if isinstance(leaf, MCPError)]
    assert errors and errors[0].error.message == "a valid bearer token is required"
    assert errors[0].error.data["code"] == "INVALID_USAGE"


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1:1",
                                  "127.0.0.1.evil.example:{port}", "[::1]:{port}", ""])
def test_a_foreign_host_is_421_before_the_token_is_looked_at(guarded: Served, token: Token,
                                                             host: str) -> None:
    response = _post(guarded, json.dumps(LIST_TOOLS), {"Host": host.format(port=guarded.port),
                                                        **_auth(token)})
    _refusal(response, 421, "INVALID_USAGE")
    health = httpx.get(guarded.base + "/health", headers={"Host": "evil.example"})
    assert health.status_code == 421
    _serving(guarded, token)


def test_loopback_names_with_the_port_are_accepted(guarded: Served, token: Token) -> None:
    for host in (f"127.0.0.1:{guarded.port}", f"localhost:{guarded.port}", f"LOCALHOST:{guarded.port}"):
        assert _post(guarded, json.dumps(LIST_TOOLS), {"Host": host, **_auth(token)}).status_code == 200


@pytest.mark.parametrize("origin", ["http://evil.example", "http://evil.example:{port}", "null",
                                    "https://127.0.0.1:{port}", "http://127.0.0.1:1", "file://"])
def test_a_foreign_origin_is_403(guarded: Served, token: Token, origin: str) -> None:
    response = _post(guarded, json.dumps(LIST_TOOLS), {"Origin": origin.format(port=guarded.port),
                                                        **_auth(token)})
    _refusal(response, 403, "INVALID_USAGE")
    _serving(guarded, token)


def test_the_servers_own_origin_is_accepted_without_cors_headers(guarded: Served, token: Token) -> None:
    response = _post(guarded, json.dumps(LIST_TOOLS),
                     {"Origin": f"http://127.0.0.1:{guarded.port}", **_auth(token)})
    assert response.status_code == 200
    assert not [h for h in response.headers if h.lower().startswith("access-control-")]


def test_a_cors_preflight_gets_405_and_no_cors_headers(guarded: Served) -> None:
    response = httpx.options(guarded.url, headers={
        "Origin": f"http://127.0.0.1:{guarded.port}", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
    })
    assert response.status_code in (401, 405)
    assert not [h for h in response.headers if h.lower().startswith("access-control-")]


def test_health_answers_without_the_token(guarded: Served) -> None:
    response = httpx.get(guarded.base + "/health")
    assert response.status_code == 200
    assert response.json()["status"] == "ok" and response.json()["name"] == "episteme"


@pytest.mark.parametrize(("method", "path", "status"), [
    ("GET", "/mcp", 405), ("DELETE", "/mcp", 405), ("PUT", "/mcp", 405),
    ("POST", "/", 404), ("GET", "/mcp/../health", 404), ("POST", "/health", 404),
])
def test_other_methods_and_paths_are_refused(guarded: Served, token: Token, method: str, path: str,
                                             status: int) -> None:
    response = httpx.request(method, guarded.base + path, headers={**JSON_HEADERS, **_auth(token)},
                             content=b"{}" if method in ("POST", "PUT") else None, timeout=10)
    if path == "/mcp/../health":  # httpx normalizes the dot segments away
        assert response.status_code in (200, 404)
        return
    _refusal(response, status, "INVALID_USAGE")
    if status == 405:
        assert response.headers["allow"] == "POST"


def test_a_body_at_the_bound_is_read_and_one_byte_more_is_413(guarded: Served, token: Token) -> None:
    message = json.dumps(LIST_TOOLS)
    at_bound = message + " " * (MAX_BODY - len(message))
    assert len(at_bound.encode()) == MAX_BODY
    assert _post(guarded, at_bound, _auth(token)).status_code == 200
    _refusal(_post(guarded, at_bound + " ", _auth(token)), 413, "LIMIT_EXCEEDED")
    _serving(guarded, token)


def test_a_streamed_body_over_the_bound_is_413(guarded: Served, token: Token) -> None:
    def chunks() -> Iterator[bytes]:  # chunked transfer: no Content-Length to refuse early
        yield json.dumps(LIST_TOOLS).encode()
        for _ in range(20):
            yield b" " * 8192

    response = httpx.post(guarded.url, content=chunks(), headers={**JSON_HEADERS, **_auth(token)}, timeout=30)
    _refusal(response, 413, "LIMIT_EXCEEDED")
    _serving(guarded, token)


def test_a_content_length_that_is_not_a_number_is_400(guarded: Served, token: Token) -> None:
    import socket

    request = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{guarded.port}\r\nAuthorization: Bearer {token[0]}\r\n"
               "Content-Type: application/json\r\nContent-Length: 12x\r\nConnection: close\r\n\r\n{}")
    with socket.create_connection(("127.0.0.1", guarded.port), timeout=10) as sock:
        sock.sendall(request.encode())
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    assert reply.split(b" ", 2)[1] == b"400"
    _serving(guarded, token)


@pytest.mark.parametrize(("body", "rpc_code"), [
    (b"{not json", -32700),
    (b"", -32700),
    (b"[1, 2]", -32602),
    (b"5", -32602),
    (json.dumps({"jsonrpc": "1.0", "id": 1, "method": "tools/list"}).encode(), -32602),
    (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "no/such/method"}).encode(), -32601),
    (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                 "params": {"name": "query", "arguments": "term"}}).encode(), -32602),
    ("\ud800".encode("utf-8", "surrogatepass"), -32700),
])
def test_malformed_json_rpc_is_a_clean_error_and_the_server_keeps_serving(
    guarded: Served, token: Token, body: bytes, rpc_code: int,
) -> None:
    response = _post(guarded, body, _auth(token))
    assert response.status_code in (200, 400)
    assert response.json()["error"]["code"] == rpc_code
    _serving(guarded, token)


def test_a_post_that_is_not_json_is_400(guarded: Served, token: Token) -> None:
    response = httpx.post(guarded.url, content=b"{}", headers={"Content-Type": "text/plain", **_auth(token)})
    assert response.status_code == 400
    _serving(guarded, token)


# -- starting: the address and the token file ------------------------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1"])
def test_an_address_beyond_loopback_needs_a_token_file(tmp_path: Path, host: str) -> None:
    result = invoke("--home", str(tmp_path / "h"), "--json", "serve", "--host", host, "--port", "0")
    assert result.exit_code == 2
    error = result.envelope["error"]
    assert error["code"] == "INVALID_USAGE" and "--token-file" in error["hint"]


def test_a_host_that_is_not_an_ip_address_is_refused(tmp_path: Path) -> None:
    result = invoke("--home", str(tmp_path / "h"), "--json", "serve", "--host", "example.org")
    assert result.exit_code == 2 and result.envelope["error"]["code"] == "INVALID_USAGE"


def test_a_port_in_use_is_resource_busy(guarded: Served, tmp_path: Path) -> None:
    result = invoke("--home", str(tmp_path / "h"), "--json", "serve", "--port", str(guarded.port))
    assert result.exit_code == 7 and result.envelope["error"]["code"] == "RESOURCE_BUSY"


def test_a_bad_token_file_stops_the_server_before_it_listens(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text(secrets.token_urlsafe(32), "ascii")
    path.chmod(0o644)
    result = invoke("--home", str(tmp_path / "h"), "--json", "serve", "--port", "0",
                    "--token-file", str(path))
    assert result.exit_code == 3
    assert "mode 0644" in result.envelope["error"]["message"]


def test_the_server_listens_on_ipv6_loopback_with_the_bracketed_host(example_home: Path) -> None:
    import socket

    if not socket.has_ipv6:
        pytest.skip("this machine has no IPv6")
    try:
        probe = socket.socket(socket.AF_INET6)
        probe.bind(("::1", 0))
        probe.close()
    except OSError:
        pytest.skip("this machine cannot bind ::1")
    served = start_server(example_home, "--host", "::1")
    try:
        assert served.url.startswith("http://[::1]:")
        assert httpx.get(served.base + "/health").status_code == 200
        ipv4_host = {"Host": f"127.0.0.1:{served.port}"}
        assert httpx.get(served.base + "/health", headers=ipv4_host).status_code == 421
    finally:
        served.stop()


def test_json_mode_announces_the_url_as_a_progress_line(example_home: Path) -> None:
    served = start_server(example_home, global_options=["--json"])
    try:
        assert httpx.get(served.base + "/health").status_code == 200
        event = json.loads(next(line for line in served.stderr if '"listening"' in line))
        assert event["type"] == "progress" and event["message"] == served.url
    finally:
        assert served.stop() == 143
    envelope = json.loads(served.stderr[-1])
    assert envelope["ok"] is False and envelope["error"]["code"] == "CANCELLED"
    assert os.path.exists(example_home)
