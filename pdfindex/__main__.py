"""``python -m pdfindex ...``: the same as the ``pdfindex`` command."""
import sys

from pdfindex.cli.main import main

sys.exit(main())
