"""The real ``pdfindex serve`` in a subprocess, for the API and browser tests.

``serving(index)`` starts ``python -m pdfindex serve`` on a free loopback port
(the environment's ``PDFINDEX_*`` settings cleared, as the other CLI tests do),
waits until ``/healthz`` answers, yields a ``Server`` (base URL, process, its
stderr) and stops it whatever happens: SIGTERM to its process group, SIGKILL to
whatever is left. A port taken by someone else between choosing it and binding
it is retried with another: the tests share the machine.

``raw_request`` sends bytes exactly as given: an HTTP client normalizes ``..``
and re-encodes the path, which is just what the traversal tests must not have
done for them.
"""
from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.ingest_helpers import ROOT, cli_env, kill_group

#: Seconds a server may take from its start to a /healthz answer.
START_TIMEOUT = 30.0
#: Lines of uvicorn's and the OS's that mean the port was taken before the bind.
_PORT_TAKEN = ("address already in use", "errno 98")


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on now (it may be taken before the server binds it:
    ``start_server`` retries)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


def url_host(host: str) -> str:
    """The host as a URL writes it; an any-address bind is reached on loopback."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


@dataclass
class Server:
    """A running ``pdfindex serve``."""

    base_url: str
    host: str
    port: int
    proc: subprocess.Popen[bytes]
    stderr_path: Path
    token: str | None = None
    argv: list[str] = field(default_factory=list)

    @property
    def stderr(self) -> str:
        """What the server wrote on stderr so far."""
        try:
            return self.stderr_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def client(self, **kwargs: Any) -> httpx.Client:
        """An httpx client for this server (no redirects followed, no proxies from
        the environment, the token sent when the server has one and ``auth`` is not
        given as False)."""
        headers = dict(kwargs.pop("headers", {}))
        if kwargs.pop("auth", True) and self.token is not None:
            headers.setdefault("Authorization", f"Bearer {self.token}")
        kwargs.setdefault("timeout", 30.0)
        return httpx.Client(base_url=self.base_url, headers=headers, follow_redirects=False, trust_env=False,
                            **kwargs)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after a grace period, to the whole process group."""
        kill_group(self.proc, grace=5.0)


def serve_argv(index: Path, port: int, host: str | None, token: str | None, extra: Sequence[str] = ()) -> list[str]:
    argv = [sys.executable, "-m", "pdfindex", "serve", "--index", str(index), "--port", str(port)]
    if host is not None:
        argv += ["--host", host]
    if token is not None:
        argv += ["--token", token]
    return [*argv, *extra]


def start_server(index: Path, *, token: str | None = None, host: str | None = None,
                 env: dict[str, str] | None = None, extra: Sequence[str] = (), log_dir: Path | None = None,
                 timeout: float = START_TIMEOUT, tries: int = 3) -> Server:
    """Start the server and wait for ``/healthz``; AssertionError with its stderr
    when it exits or does not answer in time. ``token`` is passed as ``--token``;
    a token given through ``env`` (``PDFINDEX_API_TOKEN``) is remembered for
    ``Server.client`` too. The caller stops it (or uses ``serving``)."""
    environment = env if env is not None else cli_env()
    known_token = token if token is not None else environment.get("PDFINDEX_API_TOKEN") or None
    bind = host or "127.0.0.1"
    folder = log_dir or Path(tempfile.mkdtemp(prefix="pdfindex-serve-"))
    for attempt in range(tries):
        port = free_port(bind if bind not in ("0.0.0.0", "::") else "127.0.0.1")
        argv = serve_argv(index, port, host, token, extra)
        stderr_path = folder / f"serve-{port}-{attempt}.stderr"
        with stderr_path.open("wb") as err:
            proc = subprocess.Popen(argv, cwd=ROOT, env=environment, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        server = Server(f"http://{url_host(bind)}:{port}", bind, port, proc, stderr_path, known_token, argv)
        try:
            if _wait_healthy(server, timeout):
                return server
        except BaseException:
            server.stop()
            raise
        server.stop()
        if not any(s in server.stderr.lower() for s in _PORT_TAKEN):
            raise AssertionError(f"pdfindex serve did not start ({' '.join(argv)}; exit {proc.returncode}):\n"
                                 f"{server.stderr}")
    raise AssertionError(f"pdfindex serve found no free port in {tries} tries")


def _wait_healthy(server: Server, timeout: float) -> bool:
    """True once /healthz answers 200; False when the process exited first;
    AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2.0, trust_env=False) as client:
        while True:
            if not server.alive():
                return False
            with contextlib.suppress(httpx.TransportError):
                if client.get(server.base_url + "/healthz").status_code == 200:
                    return True
            if time.monotonic() > deadline:
                raise AssertionError(f"pdfindex serve did not answer /healthz within {timeout:g} s:\n"
                                     f"{server.stderr}")
            time.sleep(0.05)


@contextlib.contextmanager
def serving(index: Path, **kwargs: Any) -> Iterator[Server]:
    """``start_server(index, **kwargs)`` for the block, stopped whatever happens."""
    server = start_server(index, **kwargs)
    try:
        yield server
    finally:
        server.stop()


# ---- raw HTTP --------------------------------------------------------------------------------

@dataclass
class RawResponse:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None


def raw_request(server: Server, target: bytes | str, *, method: str = "GET", host: str | None = None,
                headers: Sequence[tuple[str, str]] = (), body: bytes = b"", timeout: float = 30.0) -> RawResponse:
    """One HTTP/1.1 request whose request target is sent byte for byte (no
    normalization, no re-encoding), ``Connection: close``; the whole answer read."""
    raw_target = target.encode("utf-8") if isinstance(target, str) else target
    lines = [b"%s %s HTTP/1.1" % (method.encode(), raw_target),
             b"Host: " + (host if host is not None else f"{url_host(server.host)}:{server.port}").encode("latin-1"),
             b"Connection: close"]
    lines += [f"{k}: {v}".encode("latin-1") for k, v in headers]
    if body or method in ("POST", "PUT"):
        lines.append(b"Content-Length: %d" % len(body))
    data = b"\r\n".join(lines) + b"\r\n\r\n" + body
    with socket.create_connection((url_host(server.host).strip("[]"), server.port), timeout=timeout) as s:
        s.sendall(data)
        answer = _read_all(s)
    return parse_response(answer)


def _read_all(s: socket.socket) -> bytes:
    chunks = []
    while chunk := s.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def parse_response(answer: bytes) -> RawResponse:
    """Status, headers and body (chunked transfer decoded) of one HTTP/1.1 answer."""
    head, sep, body = answer.partition(b"\r\n\r\n")
    if not sep:
        raise AssertionError(f"not an HTTP answer: {answer[:200]!r}")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    status = int(status_line.split(" ", 2)[1])
    headers = [(k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in header_lines)]
    if any(k.lower() == "transfer-encoding" and "chunked" in v.lower() for k, v in headers):
        body = _unchunk(body)
    return RawResponse(status, headers, body)


def _unchunk(data: bytes) -> bytes:
    out, at = [], 0
    while True:
        end = data.index(b"\r\n", at)
        size = int(data[at:end].split(b";")[0], 16)
        if size == 0:
            return b"".join(out)
        out.append(data[end + 2:end + 2 + size])
        at = end + 2 + size + 2


__all__ = ["RawResponse", "Server", "free_port", "parse_response", "raw_request", "serve_argv", "serving",
           "start_server", "url_host"]
