"""Marked page images for the server (issue 10): a pool of render processes with
a hard time limit and an address-space cap, and a cache of the PNGs.

A hostile page must not take the server down, and pdfium runs C code that no
Python signal interrupts: so each render runs in a process of its own (spawned,
not forked: a fork would copy the server's threads' locks and its memory, and the
memory cap would count the server's heap). A render that outlives ``timeout`` has
its process killed and replaced; one that crashes or exhausts its memory cap
(``workers/limits.py``) likewise. The request gets a ``RenderError`` either way,
and the next one a fresh process.

Our own pool rather than billiard's (workers/embedded.py): its time limits are
checked by a thread that sleeps up to a second, and its soft limit is a signal that
pdfium's C code would not see; here the wait for the result is the limit.

``PageRenderer`` is safe to call from several threads (an ASGI server's thread
pool): each call takes an idle process, or waits up to ``wait`` seconds for one.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from pdfindex.workers.limits import limit_memory

from .page_image import (
    DEFAULT_WIDTH,
    DocumentChanged,
    DocumentEncrypted,
    DocumentGone,
    DocumentUnreadable,
    PageOutOfRange,
    RenderError,
    RendererBusy,
    RendererClosed,
    RenderFailed,
    RenderTimeout,
    clamp_width,
    file_png,
)

__all__ = [
    "DEFAULT_WIDTH", "DocumentChanged", "DocumentEncrypted", "DocumentGone", "DocumentUnreadable",
    "PageOutOfRange", "PageRenderer", "PngCache", "RenderError", "RenderFailed", "RenderTimeout",
    "RendererBusy", "RendererClosed",
]

#: Total bytes of PNGs kept by default.
DEFAULT_CACHE_BYTES = 64 * 1024 * 1024
#: Seconds a new render process may take to import its modules and say it is ready.
STARTUP_TIMEOUT = 30.0

# What a render process may report, by name (exceptions cross the pipe as a
# name and a message, not pickled).
_ERRORS: dict[str, type[RenderError]] = {cls.__name__: cls for cls in (
    PageOutOfRange, DocumentGone, DocumentChanged, DocumentEncrypted, DocumentUnreadable, RenderFailed)}


class PngCache:
    """Least recently used PNGs, at most ``max_bytes`` of them in all (an image
    larger than that is not kept). Thread-safe."""

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.max_bytes = max(0, max_bytes)
        self.bytes = 0
        self._items: OrderedDict[Hashable, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable) -> bytes | None:
        with self._lock:
            data = self._items.get(key)
            if data is not None:
                self._items.move_to_end(key)
            return data

    def put(self, key: Hashable, data: bytes) -> None:
        if len(data) > self.max_bytes:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.bytes -= len(old)
            self._items[key] = data
            self.bytes += len(data)
            while self.bytes > self.max_bytes:
                _, dropped = self._items.popitem(last=False)
                self.bytes -= len(dropped)


def _serve(conn: Connection, max_memory_mb: int) -> None:
    """A render process: import once, cap the address space, then render what the
    pipe brings until it closes. Every reply is ("ok", png) or ("error", kind,
    message)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    limit_memory(max_memory_mb)
    conn.send(("ready",))
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        path, doc_hash, page, terms, language, width, passwords = job
        try:
            reply: tuple[Any, ...] = ("ok", file_png(path, doc_hash, page, terms, language, width,
                                                     passwords=passwords))
        except RenderError as exc:
            reply = ("error", type(exc).__name__, str(exc))
        except MemoryError:
            reply = ("error", "RenderFailed", f"{path}: page {page}: out of memory while rendering "
                                              f"(the render process limit is {max_memory_mb} MB)")
        except Exception as exc:  # noqa: BLE001 - one page's failure is that request's error
            reply = ("error", "RenderFailed", f"{path}: page {page} could not be rendered: "
                                              f"{type(exc).__name__}: {str(exc)[:200]}")
        try:
            conn.send(reply)
        except (OSError, ValueError):
            return


class _Process:
    """One render process and our end of its pipe."""

    def __init__(self, context: Any, max_memory_mb: int) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, max_memory_mb), name="pdfindex-render",
                                       daemon=True)
        self.process.start()
        child.close()
        self.ready = False

    def wait_ready(self, timeout: float) -> bool:
        if self.ready:
            return True
        try:
            if self.conn.poll(timeout) and self.conn.recv() == ("ready",):
                self.ready = True
        except (EOFError, OSError):
            pass
        return self.ready

    def stop(self) -> None:
        """Kill it (a render in progress holds nothing worth waiting for)."""
        with contextlib.suppress(Exception):
            self.process.kill()
        self.process.join(5.0)
        self.conn.close()
        with contextlib.suppress(Exception):
            self.process.close()


class PageRenderer:
    """Marked page images, rendered by ``processes`` capped processes and cached.

    ``timeout``: seconds one render may take before its process is killed
    (RenderTimeout). ``max_memory_mb``: address-space cap of each process (0: none;
    a page beyond it fails with RenderFailed). ``wait``: seconds a call waits for a
    free process (default: ``timeout``), else RendererBusy. ``passwords`` are tried
    on encrypted files, as the ingest's password file is. A call takes at most
    about ``wait + timeout`` seconds (plus a new process's start-up, well under a
    second, after a kill)."""

    def __init__(self, *, processes: int = 2, timeout: float = 10.0, max_memory_mb: int = 1024,
                 cache_bytes: int = DEFAULT_CACHE_BYTES, passwords: Sequence[str] = (),
                 wait: float | None = None, startup_timeout: float = STARTUP_TIMEOUT) -> None:
        if processes < 1:
            raise ValueError("a PageRenderer needs at least one process")
        if not timeout > 0:
            raise ValueError("the render timeout must be positive")
        self.timeout = float(timeout)
        self.wait = float(timeout if wait is None else wait)
        self.startup_timeout = startup_timeout
        self.max_memory_mb = max_memory_mb
        self.passwords = tuple(passwords)
        self.cache = PngCache(cache_bytes)
        self._context = multiprocessing.get_context("spawn")
        self._lock = threading.Lock()
        self._idle: queue.LifoQueue[_Process] = queue.LifoQueue()
        self._all: set[_Process] = set()
        self._closed = False
        self._renders = 0
        for _ in range(processes):
            self._start_process()

    @property
    def renders(self) -> int:
        """Renders handed to a process so far (cache hits are not renders)."""
        return self._renders

    def process_ids(self) -> list[int]:
        """The render processes' ids (for status pages and tests)."""
        with self._lock:
            return sorted(p.process.pid for p in self._all if p.process.pid is not None)

    def png(self, pdf_path: Path | str, page: int, terms: Iterable[str], language: str,
            width: int = DEFAULT_WIDTH, *, doc_hash: str) -> bytes:
        """Page ``page`` (1-based) of the indexed file ``pdf_path`` as PNG, ``width``
        pixels wide (clamped to 100..2000; a very tall page is narrower), with the
        index terms ``terms`` (``PageIndex.terms_to_mark``) marked; ``language``
        is the index's. ``doc_hash`` is the content hash the index holds for the
        file: a file whose content differs is refused (DocumentChanged). Raises a
        RenderError subclass for everything that stops the image."""
        width = clamp_width(width)
        wanted = tuple(sorted(set(terms)))
        try:
            st = os.stat(pdf_path)
        except FileNotFoundError:
            raise DocumentGone(f"{pdf_path}: the file is gone (moved or deleted since it was indexed)") from None
        except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
            raise DocumentGone(f"{pdf_path}: cannot read the file: {getattr(exc, 'strerror', None) or exc}") from None
        # The file's size and mtime in the key: a file changed since its image was
        # cached goes to a render process, which compares its content with doc_hash.
        key = (doc_hash, page, width, wanted, language, st.st_size, st.st_mtime_ns)
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        data = self._render((str(pdf_path), doc_hash, page, list(wanted), language, width, list(self.passwords)))
        self.cache.put(key, data)
        return data

    def _render(self, job: tuple[Any, ...]) -> bytes:
        proc = self._take()
        done = False
        try:
            with self._lock:
                self._renders += 1
            try:
                proc.conn.send(job)
                if not proc.conn.poll(self.timeout):
                    raise RenderTimeout(f"{job[0]}: page {job[2]} took longer than {self.timeout:g} s to render; "
                                        "stopped")
                reply = proc.conn.recv()
            except (EOFError, OSError):
                raise RenderFailed(f"{job[0]}: page {job[2]}: the render process died "
                                   "(a crash, or the page needed more memory than a render may use)") from None
            done = True
        finally:
            if done:
                self._idle.put(proc)
            else:
                self._replace(proc)
        if reply[0] == "ok" and isinstance(reply[1], bytes):
            return reply[1]
        if reply[0] == "error" and len(reply) == 3:
            raise _ERRORS.get(reply[1], RenderFailed)(reply[2])
        raise RenderFailed(f"{job[0]}: page {job[2]}: the render process sent no image")

    def _take(self) -> _Process:
        if self._closed:
            raise RendererClosed("the page renderer is closed")
        if not self._all:  # every replacement failed to start (no processes left to the user?)
            try:
                self._start_process()
            except OSError as exc:
                raise RenderFailed(f"no render process could be started: {exc}") from None
        try:
            proc = self._idle.get(timeout=self.wait)
        except queue.Empty:
            raise RendererBusy(f"every render process stayed busy for {self.wait:g} s; try again") from None
        if self._closed:
            self._idle.put(proc)
            raise RendererClosed("the page renderer is closed")
        if not proc.wait_ready(self.startup_timeout):
            self._replace(proc)
            raise RenderFailed("a render process did not start (is the memory limit of "
                               f"{self.max_memory_mb} MB too small?)")
        return proc

    def _start_process(self) -> None:
        proc = _Process(self._context, self.max_memory_mb)
        with self._lock:
            if self._closed:
                closed = True
            else:
                closed = False
                self._all.add(proc)
        if closed:
            proc.stop()
            return
        self._idle.put(proc)

    def _replace(self, proc: _Process) -> None:
        with self._lock:
            self._all.discard(proc)
        proc.stop()
        with contextlib.suppress(OSError):  # out of processes: the next call tries again
            self._start_process()

    def close(self) -> None:
        """Stop every render process; calls after this raise RendererClosed."""
        with self._lock:
            self._closed = True
            procs, self._all = list(self._all), set()
        for proc in procs:
            proc.stop()

    def __enter__(self) -> PageRenderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
