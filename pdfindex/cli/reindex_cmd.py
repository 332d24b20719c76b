"""``pdfindex reindex``: the index rebuilt from its stored page text, in its own
language, shard count and engine or in new ones."""
from __future__ import annotations

import argparse

from pdfindex import config
from pdfindex.contract.display import shown
from pdfindex.indexer import reindex
from pdfindex.indexer.store import stored_engine, stored_language

from .errors import CliError
from .index_access import user_errors


def cmd_reindex(args: argparse.Namespace) -> int:
    with user_errors():
        settings = config.load()
        root = args.index or settings.index_dir
        before = stored_language(root)
        if before is None:
            raise CliError(f"no index at {shown(str(root))}")
        language = args.language or before  # without --language the index keeps its own
        engine = args.engine or stored_engine(root)  # without --engine the index keeps its own
        copied = reindex(root, language, shards=args.shards, engine=engine)
    shards = f", {args.shards} shard{'s' if args.shards > 1 else ''}" if args.shards else ""
    print(f"reindexed {copied} records into {shown(str(root))} (language {shown(language)}{shards}, "
          f"engine {engine})")
    return 0
