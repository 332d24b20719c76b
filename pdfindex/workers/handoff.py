"""Handing work to the index writers: an outcome pushed onto the common lane, the
write kick that wakes a lane's writer, and what waits to be written.

One kick is pending at a time per lane, not one per file: ``kick`` sends one only
when it can set the lane's pending-kick key, which the writer clears when it starts
draining. The hand-off item must be pushed BEFORE the kick: every item is then
either seen by a drain that had already cleared the key, or sets the key and kicks
anew.
"""
from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress

import redis

from pdfindex.config import MAX_SHARDS, Settings

from .lanes import COMMON, QUEUES, RESULTS, Lane, lanes
from .run_progress import wake
from .transport import broker_errors, client

#: The pending-kick key expires after this, so a kick lost with its worker (SIGKILLed
#: with the message still reserved) blocks new kicks for a minute at most.
KICK_SECONDS = 60
#: The pending-kick key's value when the pending kick is the writer's own delayed one.
DELAYED = b"delayed"


def push_result(r: redis.Redis, run_id: str, item: bytes) -> None:
    """Hand one item (``messages.handoff_item``, encoded) to the common lane and wake
    its run's client."""
    pipe = r.pipeline()
    pipe.rpush(RESULTS, item)
    wake(pipe, run_id)
    pipe.execute()


def kick(r: redis.Redis, send: Callable[[], object], *, force: bool = False, value: bytes = b"1",
         lane: Lane = COMMON) -> bool:
    """Send a write kick (``send()``) unless one is pending already; ``force`` sends
    one anyway (a waiting client's remedy for a kick lost with its worker). Returns
    whether one was sent; if ``send()`` fails, the key is cleared again (else a
    retried kick would find it set and send nothing). The hand-off item must be
    pushed BEFORE this is called (see the module's text)."""
    if not r.set(lane.kick, value, nx=not force, ex=KICK_SECONDS):
        return False
    try:
        send()
    except BaseException:
        with suppress(redis.RedisError):  # no kick went out: let the next try (or hand-off) send one
            r.delete(lane.kick)
        raise
    return True


def waiting(r: redis.Redis) -> dict[Lane, int]:
    """Items waiting to be written, per lane that has any (every possible shard's
    lane is looked at: one round trip)."""
    every = lanes(MAX_SHARDS)
    pipe = r.pipeline(transaction=False)
    for lane in every:
        pipe.llen(lane.results)
        pipe.llen(lane.writing)
    counts = pipe.execute()
    found = {lane: int(counts[2 * i]) + int(counts[2 * i + 1]) for i, lane in enumerate(every)}
    return {lane: n for lane, n in found.items() if n}


def queue_depths(settings: Settings) -> dict[str, int]:
    """Messages in each Celery queue (a shard's only when it has some), and the
    items waiting to be written: what ``pdfindex status`` shows."""
    with broker_errors(settings):
        r = client(settings)
        try:
            depths = {name: int(r.llen(name)) for name in QUEUES}
            pipe = r.pipeline(transaction=False)
            for shard in range(MAX_SHARDS):
                pipe.llen(Lane(shard).queue)
            depths.update((Lane(shard).queue, int(n)) for shard, n in enumerate(pipe.execute()) if n)
            depths["waiting to be written"] = sum(waiting(r).values())
        finally:
            r.close()
    return depths
