"""The one error the command layer raises: a message for the user, shown as one
line on stderr, and the exit status it ends with. Commands turn the errors of the
layers they call into it, so the entry point need not import those layers (the
index pulls in Whoosh, which ``pdfindex extract`` should not pay for)."""
from __future__ import annotations

#: Exit statuses (README "Commands").
#: An error, nothing done: no such file, not a PDF, no index, a bad setting, the
#: broker unreachable (``ingest``, ``status`` and ``pdfindex worker`` alike: a worker
#: that cannot start is not a bad command line).
EXIT_ERROR = 1
#: ``search --fail-if-none`` matched nothing: grep's status for no match (an error is
#: 1 too, and says so on stderr; this prints the search's answer and nothing there).
EXIT_NONE_FOUND = 1
#: argparse's status for a bad command line; a query or option value that cannot be
#: read is one too.
EXIT_USAGE = 2
EXIT_PASSWORD = 3
#: The index cannot be used: disk full, read-only, permission denied, corrupt, or
#: refused as untrusted (owned or writable by another user).
EXIT_STORAGE = 4
#: An ingest (or remove) ran to its end, but not everything asked for was done: files
#: failed or stayed encrypted (in this run, or in an earlier one and unchanged since: a
#: re-run must not look clean), files named were not PDFs, paths given were not found,
#: or a folder was not pruned (missing or unmounted). 0 means every file is indexed or
#: unchanged. Scripts and cron jobs can tell "nothing to worry about" from "look at the
#: summary".
EXIT_INCOMPLETE = 5
#: Stopped before the end by Ctrl-C, or (``ingest``) SIGTERM, what arrived committed.
EXIT_INTERRUPTED = 130


class CliError(Exception):
    def __init__(self, message: str, exit_status: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.exit_status = exit_status
