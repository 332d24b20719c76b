"""The one error the command layer raises: a message for the user, shown as one
line on stderr. Commands turn the errors of the layers they call into it, so the
entry point need not import those layers (the index pulls in Whoosh, which
``pdfindex extract`` should not pay for)."""
from __future__ import annotations


class CliError(Exception):
    pass
