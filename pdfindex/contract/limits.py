"""Bounds that more than one layer must agree on, defined once."""

#: Matches counted exactly before a total becomes "at least" (SearchOptions.exact_count;
#: ``search --exact-count``'s help and the search page's "1,000+" say it too).
COUNT_CAP = 1000

#: At most this many shards: a search opens every shard's files (PDFINDEX_SHARDS,
#: ``reindex --shards``, the writer queues ``index.K``).
MAX_SHARDS = 64
