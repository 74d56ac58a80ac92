"""A throwaway PostgreSQL server: Debian's ``initdb`` + ``pg_ctl`` in a temporary folder, on a free loopback port.

Used by the tests (a session fixture) and by ``benchmarks/store.py``. As root,
the server runs as the unprivileged ``postgres`` user (PostgreSQL refuses root).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

NOT_FOUND = "no PostgreSQL server binaries (initdb, pg_ctl) found; install Debian's `postgresql` package"


def binaries() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl`` (newest Debian version first), or ``None``."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name), reverse=True)
    found = shutil.which("pg_ctl")
    if found:
        candidates.append(str(Path(found).resolve().parent))
    for folder in candidates:
        if (Path(folder) / "initdb").is_file() and (Path(folder) / "pg_ctl").is_file():
            return Path(folder)
    return None


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    """One server in its own temporary folder. ``durable=False`` turns fsync off (tests need no power-cut safety)."""

    def __init__(self, bin_dir: Path, *, durable: bool = False) -> None:
        self._bin = bin_dir
        self._durable = durable
        self._root = Path(tempfile.mkdtemp(prefix="agent-core-pg-"))
        self._data = self._root / "data"
        self.port = free_port()
        self._user = _unprivileged_user()
        if self._user is not None:
            os.chown(self._root, self._user.pw_uid, self._user.pw_gid)

    def dsn(self, database: str = "postgres") -> str:
        """A URL for ``database`` on this server."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def pid(self) -> int:
        """The running postmaster's process id (its backends are its children)."""
        return int((self._data / "postmaster.pid").read_text().split()[0])

    def start(self) -> None:
        """Create the cluster on first start, then start the server and wait until it accepts connections."""
        if not self._data.exists():
            self._tool("initdb", "-D", str(self._data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
        options = f"-p {self.port} -h 127.0.0.1 -k {self._root}"
        if not self._durable:
            options += " -c fsync=off -c full_page_writes=off"
        self._tool("pg_ctl", "-D", str(self._data), "-l", str(self._root / "server.log"), "-w", "-o", options, "start")

    def restart_as_replica(self) -> None:
        """Stop, then start again as a hot standby: in recovery, read-only, as a replica of a primary is."""
        self.stop()
        (self._data / "standby.signal").touch()
        self.start()

    def ensure_running(self) -> None:
        """Start the server unless it runs."""
        if not (self._data / "postmaster.pid").exists():
            self.start()

    def stop(self, mode: str = "fast") -> None:
        """Stop the server now (open connections are closed by the server).

        ``mode="immediate"`` ends every backend at once, as a crash does: no
        transaction waiting on another's lock gets to commit as that one ends.
        """
        self._tool("pg_ctl", "-D", str(self._data), "-m", mode, "-w", "stop")

    def remove(self) -> None:
        """Stop the server if it runs and delete its folder."""
        if (self._data / "postmaster.pid").exists():
            self.stop()
        shutil.rmtree(self._root, ignore_errors=True)

    def _tool(self, name: str, *args: str) -> None:
        command = [str(self._bin / name), *args]
        if self._user is not None:
            command = ["runuser", "-u", self._user.pw_name, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{name} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")


def _unprivileged_user() -> pwd.struct_passwd | None:
    """As root: the ``postgres`` user (or ``nobody``) to run the server as; otherwise ``None`` (run as ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("running as root, and neither a `postgres` nor a `nobody` user exists to run PostgreSQL as")
