"""Who may ask the server anything: the token, the session cookie, the Host header.

* **Token.** With ``--token`` (or ``PDFINDEX_API_TOKEN``), every request but
  ``/healthz``, the sign-in form and the static files needs ``Authorization: Bearer
  <token>`` or the session cookie that signing in sets. The cookie holds an HMAC of
  the token, never the token; it is HttpOnly (no script can read it) and
  SameSite=Strict (no other site can make the browser send it), and lasts as long
  as the browser session. An image or a PDF link cannot carry a header, which is why
  the page needs a cookie at all.
* **Host.** Served on a loopback address, only requests whose Host is a loopback
  name are answered: otherwise any web page the user visits could read the index
  through DNS rebinding (its own name re-pointed at 127.0.0.1), token or not.
* **Headers.** Every HTML and JSON answer forbids framing and MIME sniffing, sends
  no referrer, and the page may run only its own script.

Comparisons are constant-time (``hmac.compare_digest``).
"""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE = "pdfindex_session"
#: Paths answered without a token: the health check, the sign-in form and its
#: assets. Nothing here reads the index.
OPEN_PATHS = ("/healthz", "/signin", "/static/")
#: Single files answered without a token: the icon a browser asks for by itself
#: (at the sign-in form too). It reads nothing of the index.
OPEN_FILES = frozenset({"/favicon.ico"})
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}

NO_TOKEN = "a token is required: send 'Authorization: Bearer <token>'"
WRONG_TOKEN = "the token sent is wrong: it is not the token this server was started with"
BAD_SCHEME = "the Authorization header must be 'Bearer <token>'"
STALE_SESSION = ("the session cookie is not valid for this server (was it restarted with another token?): "
                 "sign in again or send 'Authorization: Bearer <token>'")
#: What the sign-in form is told (``?why=``) about a refused page request.
SIGNIN_REASONS = {WRONG_TOKEN: "wrong", BAD_SCHEME: "wrong", STALE_SESSION: "session"}

_SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"content-security-policy",
     b"default-src 'self'; img-src 'self' blob: data:; script-src 'self'; style-src 'self'; "
     b"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
]


def session_value(token: str) -> str:
    """What the session cookie holds for ``token``."""
    return hmac.new(token.encode(), b"pdfindex session cookie", hashlib.sha256).hexdigest()


def token_matches(given: str, token: str | None) -> bool:
    return token is not None and hmac.compare_digest(given.encode("utf-8", "replace"), token.encode())


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is this machine only."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_name(value: str) -> str:
    """The name of a Host header, without its port (``[::1]:8080`` → ``::1``)."""
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _cookie(headers: dict[bytes, bytes], name: str) -> str | None:
    for part in headers.get(b"cookie", b"").decode("latin-1").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


class Access:
    """ASGI middleware: the Host check, the token check, the security headers."""

    def __init__(self, app: ASGIApp, token: str | None, loopback_only: bool) -> None:
        self.app = app
        self.token = token
        self.session = session_value(token) if token else None
        self.loopback_only = loopback_only

    def refusal(self, headers: dict[bytes, bytes]) -> str | None:
        """Why the request may not in (None: it may, by its token or its session
        cookie): no token sent, a wrong one, or a cookie this server's token did not
        make. Nothing of what was sent is repeated."""
        if self.token is None:
            return None
        auth = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, given = auth.partition(" ")
        bearer = given.strip() if scheme.lower() == "bearer" else ""
        if bearer and token_matches(bearer, self.token):
            return None
        cookie = _cookie(headers, COOKIE)
        if cookie is not None and self.session is not None and hmac.compare_digest(
                cookie.encode("latin-1", "replace"), self.session.encode()):
            return None
        if bearer:
            return WRONG_TOKEN
        if auth.strip():
            return BAD_SCHEME
        return NO_TOKEN if cookie is None else STALE_SESSION

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        path: str = scope.get("path", "")
        if self.loopback_only and not is_loopback(_host_name(headers.get(b"host", b"").decode("latin-1"))):
            await _refuse(send, 421, "this server answers only requests for a loopback host name "
                                     "(localhost, 127.0.0.1, [::1])")
            return
        refusal = None if path.startswith(OPEN_PATHS) or path in OPEN_FILES else self.refusal(headers)
        if refusal is not None:
            if path.startswith("/api/") or path == "/openapi.json":
                error = "" if refusal == NO_TOKEN else ', error="invalid_token"'  # RFC 6750 3.1
                await _refuse(send, 401, refusal,
                              [(b"www-authenticate", f'Bearer realm="pdfindex"{error}'.encode())])
            else:  # the page: to the sign-in form, coming back here afterwards, told why if it sent one
                query = scope.get("query_string", b"").decode("latin-1")
                back = path + ("?" + query if query else "")
                why = [] if refusal == NO_TOKEN else [("why", SIGNIN_REASONS[refusal])]
                location = "/signin?" + urlencode([("next", back), *why])
                await send({"type": "http.response.start", "status": 303,
                            "headers": [(b"location", location.encode()), *_SECURITY_HEADERS]})
                await send({"type": "http.response.body", "body": b""})
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *((k, v) for k, v in _SECURITY_HEADERS if k not in present)]
            await send(message)

        await self.app(scope, receive, with_headers)


def safe_next(value: str | None) -> str:
    """Where to go after signing in: a path of this server only (``/x``), never
    another site (``//evil``, ``https://…``, ``/\\evil``). No control character
    either: a browser drops tabs and newlines from a URL, so ``/<TAB>/evil`` is
    ``//evil`` to it."""
    if (not value or not value.startswith("/") or value.startswith(("//", "/\\"))
            or any(c < " " or c == "\x7f" for c in value)):
        return "/"
    return value


def form_field(body: bytes, name: str) -> str:
    """One field of an ``application/x-www-form-urlencoded`` body ('' if absent)."""
    values = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).get(name)
    return values[0] if values else ""


async def _refuse(send: Send, status: int, message: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *(extra or []), *_SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": body})
