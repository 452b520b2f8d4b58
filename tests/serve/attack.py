"""A connection flood for ``test_connections``, run as its own process (so it races the client as a
real attacker does, not through one interpreter's lock): silent sockets and slowloris ones trickling
header lines, spread over loopback addresses, each reopened when the server closes it.

Usage: python attack.py PORT SILENT SLOW ADDRESS...; prints ``ready`` once all are open, runs until its
stdin closes, then prints one JSON line: ``{"opened": N, "closedByServer": N}``.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import threading


def connect(port: int, source: str, slow: bool) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    if slow:
        sock.sendall(b"POST /mcp HTTP/1.1\r\n")
    return sock


def closed(sock: socket.socket) -> bool:
    """True once the server has closed ``sock``."""
    while select.select([sock], [], [], 0)[0]:
        try:
            if not sock.recv(1 << 16):
                return True
        except OSError:
            return True
    return False


def main() -> None:
    port, silent, slow = (int(arg) for arg in sys.argv[1:4])
    addresses = sys.argv[4:]
    plan = [(addresses[i % len(addresses)], False) for i in range(silent)]
    plan += [(addresses[i % len(addresses)], True) for i in range(slow)]
    socks = [connect(port, source, is_slow) for source, is_slow in plan]
    opened, by_server = len(socks), 0
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    print("ready", flush=True)
    while not done.wait(0.25):
        for i, (source, is_slow) in enumerate(plan):
            alive = not closed(socks[i])
            if alive and is_slow:
                try:
                    socks[i].send(b"x-slow: 1\r\n")
                except OSError:
                    alive = False
            if not alive:
                socks[i].close()
                by_server += 1
                try:
                    socks[i] = connect(port, source, is_slow)
                    opened += 1
                except OSError:
                    pass
    print(json.dumps({"opened": opened, "closedByServer": by_server}), flush=True)


if __name__ == "__main__":
    main()
