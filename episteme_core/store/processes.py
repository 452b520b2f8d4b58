"""Who wrote a file: this host's name, and whether a process id on it is still alive.

The writer lock names its holder by host and pid, and temp files carry their writer's pid, so that a
dead writer's leftovers can be told from a live one's work.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path


def pid_is_alive(pid: int) -> bool:
    """True when ``pid`` names a running (not zombie) process on this host."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        state = stat.rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError):
        return True


def hostname() -> str:
    return os.environ.get("HOSTNAME") or socket.gethostname()
