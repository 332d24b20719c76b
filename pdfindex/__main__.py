"""``python -m pdfindex ...``: the same as the ``pdfindex`` command."""
import sys

from cli.main import main

sys.exit(main())
