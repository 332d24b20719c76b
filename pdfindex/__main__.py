"""``python -m pdfindex ...``: the same as the ``pdfindex`` command."""
import sys

from pdfindex.cli.main import main

if __name__ == "__main__":  # not when a spawned process (page renderer, search lane) imports it
    sys.exit(main())
