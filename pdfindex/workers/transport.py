"""The Redis connection of the ingest hand-off: a client from the broker's URL (TLS
verified unless the URL turns it down), broker faults as one line, and calls that
wait out a Redis restart.

The client speaks to the same Redis as Celery's broker, with the same URL: a
password, an ACL user, rediss:// with its TLS options, or unix://. Whatever goes
wrong there (refused, wrong password, ACL, TLS, unknown host) reaches the user as
one ``BrokerError`` line naming the broker without its password (``describe``).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis

from pdfindex.config import Settings, redact_url

from .errors import BrokerError
from .lanes import RESULTS

#: ``ssl_cert_reqs`` spellings of Celery/kombu (CERT_REQUIRED) and redis-py (required).
_CERT_REQS = {"cert_required": "required", "required": "required", "cert_optional": "optional",
              "optional": "optional", "cert_none": "none", "none": "none"}


def tls_options(url: str) -> dict[str, str] | None:
    """For a rediss:// URL, its TLS options from the query (``ssl_cert_reqs``,
    ``ssl_ca_certs``, ``ssl_certfile``, ``ssl_keyfile``), with certificate
    verification REQUIRED unless the URL turns it down explicitly (kombu alone would
    silently not verify). None for plain redis:// and unix://."""
    parts = urlsplit(url)
    if parts.scheme != "rediss":
        return None
    query = dict(parse_qsl(parts.query))
    reqs = query.get("ssl_cert_reqs", "required")
    if reqs.lower() not in _CERT_REQS:
        raise BrokerError(f"{redact_url(url)}: ssl_cert_reqs={reqs!r} is not one of required, optional, none")
    options = {"ssl_cert_reqs": _CERT_REQS[reqs.lower()]}
    for key in ("ssl_ca_certs", "ssl_certfile", "ssl_keyfile"):
        if query.get(key):
            options[key] = query[key]
    return options


def _redis_url(url: str) -> str:
    """The URL as redis-py wants it: ``ssl_cert_reqs`` in its own spelling."""
    options = tls_options(url)
    if options is None:
        return url
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "ssl_cert_reqs"]
    query.append(("ssl_cert_reqs", options["ssl_cert_reqs"]))
    return urlunsplit(parts._replace(query=urlencode(query)))


def client(settings: Settings, timeout: float = 30) -> redis.Redis:
    """A Redis client for the hand-off lists, from the same URL as the broker
    (passwords, ACL users, rediss:// with its TLS options, unix://); ``timeout``
    per command (short where a caller must not stall, as a worker's event loop)."""
    url = settings.broker_url
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise BrokerError(f"PDFINDEX_BROKER_URL={redact_url(url)!r}: the ingest hand-off needs a Redis broker")
    try:
        return redis.Redis.from_url(_redis_url(url), socket_timeout=timeout, socket_connect_timeout=min(timeout, 10),
                                    health_check_interval=30)
    except (ValueError, redis.RedisError) as exc:
        raise BrokerError(f"PDFINDEX_BROKER_URL={redact_url(url)!r}: {exc}") from None


#: How a broker fault shows, first match wins: (an exception class that means it, or
#: None; words its text holds, lower-cased; what to say, ``{text}`` being the error's).
_SYMPTOMS: tuple[tuple[type[BaseException] | None, tuple[str, ...], str], ...] = (
    (None, ("noauth", "authentication required"), "the broker requires a password (none given in the URL)"),
    (redis.AuthenticationError, ("wrongpass", "invalid password", "invalid username-password"),
     "authentication failed (wrong password or user name)"),
    (None, ("noperm", "no permissions"), "the broker's ACL refuses a command: {text}"),
    (None, ("ssl", "certificate", "tls"), "TLS failed: {text}"),
    (None, ("connection refused", "errno 111"), "connection refused"),
    (None, ("name or service not known", "nodename nor servname", "errno -2"), "unknown host: {text}"),
    (redis.TimeoutError, ("timed out",), "timed out"),
)


def describe(exc: BaseException) -> str:
    """What went wrong with the broker, in a few words (never the password)."""
    text = str(exc)
    low = text.lower()
    for kind, words, meaning in _SYMPTOMS:
        if (kind is not None and isinstance(exc, kind)) or any(word in low for word in words):
            return meaning.format(text=text)
    return text or type(exc).__name__


def broker_error(settings: Settings, exc: BaseException) -> BrokerError:
    return BrokerError(f"cannot reach the broker at {redact_url(settings.broker_url)}: {describe(exc)}")


def _broker_exceptions() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [redis.RedisError, ConnectionError, OSError]
    with suppress(ImportError):
        # kombu's error class, looked up only when a broker call failed: `pdfindex status` starts without kombu
        from kombu.exceptions import OperationalError  # noqa: PLC0415

        errors.append(OperationalError)
    return tuple(errors)


@contextmanager
def broker_errors(settings: Settings) -> Iterator[None]:
    """Turn every Redis/kombu connection, auth or TLS error into one BrokerError
    line naming the broker (without its password) and the problem."""
    try:
        yield
    except BrokerError:
        raise
    except _broker_exceptions() as exc:
        raise broker_error(settings, exc) from None


def ping(settings: Settings) -> None:
    """Connect, authenticate and check that our commands are allowed (ACL), or
    raise BrokerError."""
    with broker_errors(settings):
        r = client(settings)
        try:
            r.ping()
            r.llen(RESULTS)
        finally:
            r.close()


_REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError)


def retrying(call: Callable[[], Any], patience: float = 120.0) -> Any:
    """Run a Redis call, waiting out a Redis restart (up to ``patience`` seconds)
    instead of failing the file being worked on."""
    deadline = time.monotonic() + patience
    delay = 0.2
    while True:
        try:
            return call()
        except redis.AuthenticationError:
            raise  # a subclass of ConnectionError, but waiting does not fix a wrong password
        except _REDIS_DOWN:
            if time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 3.0)
