"""``pdfindex serve``: the search page and the JSON API over HTTP (server/)."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from pdfindex import config

from .errors import EXIT_USAGE, CliError
from .terminal import shown

#: The environment variable holding the API token (``--token`` wins over it).
TOKEN_ENV = "PDFINDEX_API_TOKEN"


def add_commands(sub: Any) -> None:
    from .search_cmd import _index_arg  # noqa: PLC0415 - one definition of --index

    p = sub.add_parser("serve", help="serve the search page and the JSON API over HTTP",
                       description="Serve the index over HTTP: the search page at / and the JSON API "
                                   "under /api (described at /openapi.json). The index is "
                                   "opened read-only and follows what ingests commit.")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; anything else needs a token)")
    p.add_argument("--port", type=_port, default=8080, help="port (default 8080)")
    p.add_argument("--token", help=f"require this token ('Authorization: Bearer ...'); default ${TOKEN_ENV}")
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


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn  # noqa: PLC0415 - only this command serves

    from pdfindex.server.access import is_loopback  # noqa: PLC0415
    from pdfindex.server.app import ServeOptions, create_app  # noqa: PLC0415

    settings = config.load()
    root = args.index or settings.index_dir
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV) or None
    if token is not None and (len(token) < 8 or token != token.strip()):
        raise CliError("the token must be at least 8 characters, without spaces at either end", EXIT_USAGE)
    if not is_loopback(args.host) and token is None:
        print(f"pdfindex: warning: serving on {shown(args.host)} without a token: anyone who can reach this "
              f"port can search and download every indexed document; set --token or ${TOKEN_ENV}",
              file=sys.stderr)
    try:
        app = create_app(ServeOptions(index_dir=root, settings=settings, host=args.host, token=token))
    except FileNotFoundError:
        raise CliError(f"no index at {shown(str(root))}; ingest some PDFs first (or pass --index)") from None
    shown_host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"pdfindex: serving {shown(str(root))} on http://{shown_host}:{args.port}/ (Ctrl-C stops)", file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False,
                server_header=False, timeout_graceful_shutdown=2)
    return 0
