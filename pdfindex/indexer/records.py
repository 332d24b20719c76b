"""The records moved to ``pdfindex.contract.records`` (issue 21); this name stays
for the modules that still import it from here, until they import the contract."""
from pdfindex.contract.records import DocumentRecord, Status

__all__ = ["DocumentRecord", "Status"]
