"""A throwaway PostgreSQL cluster for the tests (issue 20): ``initdb`` + ``pg_ctl`` in /tmp.

The binaries come from ``CONFGATE_PG_BINDIR``, ``initdb`` on ``PATH``, or the Debian package's
``/usr/lib/postgresql/<version>/bin`` (newest first). PostgreSQL refuses to run as root, so as
root the cluster belongs to the ``postgres`` user (the Debian package creates it), else to
``nobody``; its folder is made theirs. It listens on 127.0.0.1 only, on a free port, with no
Unix socket; role ``confgate`` needs no password, role ``confgate_secret`` needs
``SECRET_PASSWORD`` (scram-sha-256), so password handling is tested for real.

A cluster left behind by a test run that was killed is stopped and removed by the next start.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PREFIX = "confgate-pg-"
SUPERUSER = "confgate"
SECRET_USER = "confgate_secret"  # noqa: S105 - a role name, not a password
SECRET_PASSWORD = "s3cr3t-Pa55w0rd-for-tests"  # noqa: S105 - a throwaway test cluster's
_HBA = f"""\
host all {SECRET_USER} 127.0.0.1/32 scram-sha-256
host all all 127.0.0.1/32 trust
"""
_SETTINGS = (
    "listen_addresses=127.0.0.1", "unix_socket_directories=", "fsync=off",
    "synchronous_commit=off", "full_page_writes=off", "max_connections=200",
    "shared_buffers=64MB",
)


def find_bindir() -> Path | None:
    """Where ``initdb`` and ``pg_ctl`` are, or ``None``."""
    candidates = []
    if os.environ.get("CONFGATE_PG_BINDIR"):
        candidates.append(Path(os.environ["CONFGATE_PG_BINDIR"]))
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).parent)
    debian = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0, reverse=True,
    )
    candidates.extend(debian)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    return None


@dataclass
class Cluster:
    """A running cluster: ``url(database)`` for a role without a password."""

    bindir: Path
    folder: Path
    port: int
    owner: str | None

    def url(self, database: str, user: str = SUPERUSER) -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    def execute(self, statement: str, database: str = "postgres") -> None:
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            conn.execute(statement)  # type: ignore[arg-type]  # our own fixed statements

    def stop(self) -> None:
        _pg_ctl(self.bindir, self.folder / "data", self.owner, "stop", "-m", "immediate",
                check=False)
        shutil.rmtree(self.folder, ignore_errors=True)


def start(bindir: Path) -> Cluster:
    """initdb and start a cluster; a port someone else took meanwhile is retried."""
    _remove_abandoned(bindir)
    owner = _owner()
    folder = Path(tempfile.mkdtemp(prefix=PREFIX))
    (folder / "owner.pid").write_text(str(os.getpid()), encoding="utf-8")
    folder.chmod(0o755)
    data = folder / "data"
    if owner is not None:
        os.chown(folder, pwd.getpwnam(owner).pw_uid, pwd.getpwnam(owner).pw_gid)
    _run([str(bindir / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=trust",
          "-E", "UTF8", "--locale=C", "--no-sync"], owner)
    (data / "pg_hba.conf").write_text(_HBA, encoding="utf-8")
    for _ in range(5):
        port = _free_port()
        options = " ".join(f"-c {item}" for item in (*_SETTINGS, f"port={port}"))
        started = _pg_ctl(bindir, data, owner, "start", "-w", "-t", "120", "-l",
                          str(folder / "server.log"), "-o", options, check=False)
        if started.returncode == 0:
            cluster = Cluster(bindir, folder, port, owner)
            cluster.execute(f"CREATE ROLE {SECRET_USER} LOGIN SUPERUSER "
                            f"PASSWORD '{SECRET_PASSWORD}'")
            return cluster
        time.sleep(0.2)
    log = (folder / "server.log").read_text(encoding="utf-8", errors="replace")
    shutil.rmtree(folder, ignore_errors=True)
    raise RuntimeError(f"PostgreSQL did not start:\n{log[-3000:]}")


def _owner() -> str | None:
    """Who runs the server: ourselves, or as root the ``postgres`` user (else ``nobody``)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise RuntimeError("running as root, and neither a postgres nor a nobody user exists")


def _run(
    argv: list[str], owner: str | None, *, check: bool = True
) -> subprocess.CompletedProcess[str]:
    extra: dict[str, Any] = {}
    if owner is not None:
        entry = pwd.getpwnam(owner)
        extra = {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
    env = {**os.environ, "LC_ALL": "C"}
    result = subprocess.run(argv, capture_output=True, text=True, timeout=180, env=env,
                            cwd="/", check=False, **extra)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def _pg_ctl(bindir: Path, data: Path, owner: str | None, *args: str,
            check: bool = True) -> subprocess.CompletedProcess[str]:
    return _run([str(bindir / "pg_ctl"), "-D", str(data), *args], owner, check=check)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _remove_abandoned(bindir: Path) -> None:
    """Stop and remove clusters whose test run died without cleaning up."""
    for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        try:
            pid = int((folder / "owner.pid").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if _alive(pid):
            continue
        _pg_ctl(bindir, folder / "data", _owner(), "stop", "-m", "immediate", check=False)
        shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
