"""``pdfindex serve``: the search page and the JSON API over HTTP (server/)."""
from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
from typing import TYPE_CHECKING, Any

from pdfindex import config

from .errors import EXIT_USAGE, CliError
from .terminal import shown

if TYPE_CHECKING:
    import socket

#: The environment variable holding the API token (``--token`` wins over it).
TOKEN_ENV = "PDFINDEX_API_TOKEN"
#: Why a bind fails, in words (the rest: the system's own message).
_BIND_ERRORS = {errno.EADDRINUSE: "address already in use (choose another --port)",
                errno.EACCES: "permission denied (ports below 1024 need privileges)",
                errno.EADDRNOTAVAIL: "no such address on this machine"}


def add_commands(sub: Any) -> None:
    from .search_cmd import _index_arg, path_arg  # noqa: PLC0415 - one definition of --index

    p = sub.add_parser("serve", help="serve the search page and the JSON API over HTTP",
                       description="Serve the index over HTTP: the search page at / and the JSON API "
                                   "under /api (described at /openapi.json). The index is "
                                   "opened read-only and follows what ingests commit.")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; anything else needs a token)")
    p.add_argument("--port", type=_port, default=8080, help="port (default 8080)")
    p.add_argument("--token", help=f"require this token ('Authorization: Bearer ...'); default ${TOKEN_ENV}")
    p.add_argument("--password-file", type=path_arg,
                   help="passwords to try on encrypted files' page images, one a line "
                        "(default $PDFINDEX_PASSWORD_FILE)")
    _index_arg(p)
    p.set_defaults(func=cmd_serve)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)")
    return port


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound and listening on ``host:port``, as uvicorn would bind it, so
    that a port in use is a one-line error before anything says it is serving."""
    import socket  # noqa: PLC0415 - only this command listens (3 ms of every command's start-up)

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
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
    import uvicorn  # noqa: PLC0415 - only this command serves

    from pdfindex.server.access import is_loopback  # noqa: PLC0415
    from pdfindex.server.app import PasswordFileError, ServeOptions, create_app  # noqa: PLC0415

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
