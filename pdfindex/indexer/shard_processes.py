"""Shard writers in processes of their own, so N shards are written on N cores.

A Whoosh writer is single-threaded Python, and ``ShardedWriter`` runs every
shard's ``PageWriter`` in the calling process: four shards index no faster than
one. ``ParallelShardedWriter`` runs each shard's ``PageWriter`` in a child process
and sends it its operations through a bounded queue; the caller only routes and
pickles them. The queue lets one shard run ahead while another commits, and bounds
how far the caller may run ahead of the slowest.

What crosses shards is a path (see ``sharded_writer``): instead of asking the other
shards who holds it, a round trip per file, the caller tells each other shard to
let it go (``release``), and goes on.

A child is a new interpreter (``python -m pdfindex.indexer.shard_processes``),
never a fork: the caller may have threads, an extraction pool's among them, and
multiprocessing's spawn would import the caller's main script again. It talks
through a socket pair with pickled messages (between our own processes only),
ignores Ctrl-C (its parent decides what to commit), and when its parent dies,
however, it cancels what it had not committed and exits: each shard stays as its
last commit left it. A failure in a child (a full disk) cancels that shard's
batch; the caller learns it at its next operation or at the commit, and every
shard is then cancelled or committed before the error is raised. Each shard
commits on its own, as with ``ShardedWriter``.
"""
from __future__ import annotations

import contextlib
import os
import pickle
import queue
import signal
import socket
import subprocess
import sys
import threading
import weakref
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pdfindex
from pdfindex.contract.records import DocumentRecord

from .errors import StorageError
from .page_index import PageIndex
from .sharded_writer import ShardRouter, shard_index
from .writer import PageWriter

#: Operations a child may be behind its parent (a few batches' worth of files).
_AHEAD = 256
#: How often a waiting side looks whether the other still lives, in seconds.
_LIVENESS = 1.0
#: What a child does with an operation: PageWriter's methods of that name.
_OPERATIONS = frozenset({"add", "add_path", "remove_path", "delete", "release"})
_ENDS = frozenset({"commit", "cancel"})


class _Shard:
    """One child: its process, its connection, and the thread that sends it what
    is queued (so the caller can run ahead of a shard that is committing)."""

    def __init__(self, root: Path, shard: int, batch_pages: int, lock_timeout: float) -> None:
        where = str(Path(pdfindex.__file__).resolve().parents[1])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [where, os.environ.get("PYTHONPATH")]))}
        ours, theirs = socket.socketpair()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", __name__, str(root), str(shard), str(batch_pages), str(lock_timeout),
                 str(theirs.fileno())],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, env=env)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.connection = Connection(ours.detach())
        self.outbox: queue.Queue[bytes | None] = queue.Queue(maxsize=_AHEAD)
        self.broken: BaseException | None = None
        self._sender = threading.Thread(target=self._send_queued, name=f"pdfindex shard {shard} sender", daemon=True)
        self._sender.start()

    def _send_queued(self) -> None:
        while (message := self.outbox.get()) is not None:
            if self.broken is None:
                try:
                    self.connection.send_bytes(message)
                except Exception as exc:  # noqa: BLE001 - the child is gone; the caller learns it when it waits
                    self.broken = exc

    def stop(self) -> None:
        """End the child (it cancels what it had not committed) and the sender."""
        with contextlib.suppress(queue.Full):
            self.outbox.put(None, timeout=_LIVENESS)
        self._sender.join(timeout=10.0)
        with contextlib.suppress(OSError):
            self.connection.close()  # the child sees the end of its input
        try:
            self.process.wait(timeout=10.0)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class ParallelShardedWriter(ShardRouter):
    """``PageWriter``'s interface over a process per shard of the index at ``root``."""

    def __init__(self, root: Path, shards: int, batch_pages: int = 2000, lock_timeout: float = 30.0) -> None:
        super().__init__(shards)
        self._root = Path(root)
        self._shards: list[_Shard] = []
        self.rejected: list[DocumentRecord] = []
        self._finalizer = weakref.finalize(self, _stop, self._shards)
        try:
            for shard in range(shards):
                self._shards.append(_Shard(self._root, shard, batch_pages, lock_timeout))
        except BaseException:
            self.close()  # the shard writers already started
            raise

    def _to(self, shard: int, how: str, *args: Any) -> None:
        """Queue the operation for a shard's writer; raises what that writer failed
        with since the last commit, or that it died."""
        if self._shards[shard].connection.poll():
            _kind, failure, rejected = self._receive(shard)
            self.rejected.extend(rejected)
            if failure is not None:
                raise failure
        self._put(shard, (how, *args))

    def _put(self, shard: int, message: tuple[Any, ...]) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)  # here: what cannot be sent raises here
        while True:
            try:
                self._shards[shard].outbox.put(data, timeout=_LIVENESS)
                return
            except queue.Full:
                self._check_alive(shard)

    def _check_alive(self, shard: int) -> None:
        child = self._shards[shard]
        code = child.process.poll()
        if code is not None or child.broken is not None:
            raise StorageError(f"{self._root}: the writer of shard {shard} ended (exit code {code}); "
                               "its batch was not written")

    def _receive(self, shard: int) -> tuple[str, BaseException | None, list[DocumentRecord]]:
        connection = self._shards[shard].connection
        while not connection.poll(_LIVENESS):
            self._check_alive(shard)
        try:
            return connection.recv()
        except (EOFError, OSError):
            raise StorageError(f"{self._root}: the writer of shard {shard} ended; its batch was not written"
                               ) from None

    def commit(self) -> None:
        self._end("commit")

    def cancel(self) -> None:
        self._end("cancel")

    def _end(self, how: str) -> None:
        """Commit or cancel every shard's batch, then raise the first failure."""
        failures: list[BaseException] = []
        for shard in range(len(self._shards)):
            try:
                self._put(shard, (how,))
            except BaseException as exc:  # noqa: BLE001 - the other shards still end their batches
                failures.append(exc)
        for shard in range(len(self._shards)):
            try:
                while True:  # a failure reported before the end comes first
                    kind, failure, rejected = self._receive(shard)
                    self.rejected.extend(rejected)
                    if failure is not None:
                        failures.append(failure)
                    if kind == "ended":
                        break
            except BaseException as exc:  # noqa: BLE001 - as above
                failures.append(exc)
        if failures:
            raise failures[0]

    def __exit__(self, *exc: Any) -> None:
        try:
            super().__exit__(*exc)
        finally:
            self.close()

    def close(self) -> None:
        """End the shard writers (what they had not committed is cancelled)."""
        self._finalizer()


def _stop(shards: list[_Shard]) -> None:
    for child in shards:
        child.stop()


def _serve(connection: Connection, root: str, shard: int, batch_pages: int, lock_timeout: float) -> None:
    """A shard writer's loop, in its child process: a ``PageWriter`` over shard
    ``shard`` of the index at ``root``, doing what comes through ``connection``."""
    parent = os.getppid()
    writer: Any = None
    try:
        index = PageIndex(Path(root), create=False)
        writer = PageWriter(shard_index(lambda: index._ix, shard), batch_pages=batch_pages,
                            lock_timeout=lock_timeout, root=root)
    except BaseException as exc:  # noqa: BLE001 - sent to the parent, which raises it
        _reply(connection, ("failed", _sendable(exc), []))
    failed = writer is None
    reported = 0
    while True:
        message = None
        try:
            while not connection.poll(_LIVENESS) and os.getppid() == parent:
                pass
            if os.getppid() == parent:
                message = connection.recv()
        except (EOFError, OSError, pickle.UnpicklingError):
            pass  # the parent closed its end (mid-message, even), or died: nothing more will come
        if message is None:
            if writer is not None:
                writer.cancel()
            return
        how, *args = message
        failure: BaseException | None = None
        if how in _ENDS:
            try:
                if how == "commit" and not failed:
                    writer.commit()
                elif writer is not None:
                    writer.cancel()
            except BaseException as exc:  # noqa: BLE001 - sent to the parent, which raises it
                failure = exc
            failed = writer is None
            rejected = writer.rejected[reported:] if writer is not None else []
            reported += len(rejected)
            _reply(connection, ("ended", _sendable(failure), rejected))
        elif how in _OPERATIONS and not failed:
            try:
                getattr(writer, how)(*args)
            except BaseException as exc:  # noqa: BLE001 - as above; the batch is gone
                writer.cancel()
                failed = True
                _reply(connection, ("failed", _sendable(exc), []))


def _reply(connection: Connection, message: tuple[Any, ...]) -> None:
    """Tell the parent; a parent that died is told nothing (its end is closed)."""
    with contextlib.suppress(OSError):
        connection.send(message)


def _sendable(exc: BaseException | None) -> BaseException | None:
    """``exc`` if it survives pickling, else a StorageError saying what it was."""
    if exc is None:
        return None
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - an exception that cannot cross processes
        return StorageError(f"a shard writer failed: {type(exc).__name__}: {exc}")
    return exc


def main(argv: list[str]) -> None:
    """The child's entry: ``ROOT SHARD BATCH_PAGES LOCK_TIMEOUT FD``. Ctrl-C and
    SIGTERM sent to the whole process group (a terminal, a service manager) are the
    parent's to answer: it commits what arrived and then closes the socket, which
    ends this process (or kills it, should it not answer)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    root, shard, batch_pages, lock_timeout, fd = argv
    _serve(Connection(int(fd)), root, int(shard), int(batch_pages), float(lock_timeout))


if __name__ == "__main__":
    main(sys.argv[1:])
