"""pdfindex: ``python -m pdfindex`` runs the ``pdfindex`` command.

The version is written here rather than read from the installed metadata, because
importing importlib.metadata would cost every command a few tens of milliseconds
of start-up; a test checks that it equals pyproject.toml's.
"""
__version__ = "0.1.0"
