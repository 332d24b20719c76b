"""``pdfindex serve``: the search page and the JSON API over HTTP (server/)."""
from __future__ import annotations

import argparse
import contextlib
import errno
import os
import socket
import sys

import uvicorn

from pdfindex import config
from pdfindex.contract.display import shown
from pdfindex.server.access import is_loopback
from pdfindex.server.app import PasswordFileError, ServeOptions, create_app

from .errors import EXIT_USAGE, CliError
from .parsers import TOKEN_ENV

#: Why a bind fails, in words (the rest: the system's own message).
_BIND_ERRORS = {errno.EADDRINUSE: "address already in use (choose another --port)",
                errno.EACCES: "permission denied (ports below 1024 need privileges)",
                errno.EADDRNOTAVAIL: "no such address on this machine"}


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound and listening on ``host:port``, as uvicorn would bind it, so
    that a port in use is a one-line error before anything says it is serving.

    Its protocol is named (IPPROTO_TCP, not 0): asyncio turns Nagle's algorithm off
    (TCP_NODELAY) only on accepted sockets of that protocol, and with it on, every
    response waited about 40 ms for the client's delayed acknowledgement."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a server that just stopped leaves TIME_WAIT
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        reason = _BIND_ERRORS.get(exc.errno or 0) or (exc.strerror or str(exc)).lower()
        if isinstance(exc, socket.gaierror):
            reason = f"no such host ({reason})"
        raise CliError(f"cannot serve on {_address(host, port)}: {reason}") from None
    return sock


def _address(host: str, port: int) -> str:
    return f"{shown(f'[{host}]' if ':' in host else host)}:{port}"


def cmd_serve(args: argparse.Namespace) -> int:
    settings = config.load()
    root = args.index or settings.index_dir
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV) or None
    if token is not None and (len(token) < 8 or token != token.strip()):
        raise CliError("the token must be at least 8 characters, without spaces at either end", EXIT_USAGE)
    if not is_loopback(args.host) and token is None:
        print(f"pdfindex: warning: serving on {shown(args.host)} without a token: anyone who can reach this "
              f"port can search and download every indexed document; set --token or ${TOKEN_ENV}",
              file=sys.stderr)
    sock = _listen(args.host, args.port)
    try:
        try:
            app = create_app(ServeOptions(index_dir=root, settings=settings, host=args.host, token=token,
                                          password_file=args.password_file))
        except FileNotFoundError:
            raise CliError(f"no index at {shown(str(root))}; ingest some PDFs first (or pass --index)") from None
        except PasswordFileError as exc:
            raise CliError(shown(str(exc))) from None
        port = sock.getsockname()[1]  # --port 0: the one the system chose
        print(f"pdfindex: serving {shown(str(root))} on http://{_address(args.host, port)}/ (Ctrl-C stops)",
              file=sys.stderr, flush=True)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, server_header=False,
                                               timeout_graceful_shutdown=2))
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: uvicorn has shut down already
            server.run(sockets=[sock])
    finally:
        sock.close()
    return 0
