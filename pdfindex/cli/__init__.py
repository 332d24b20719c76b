"""The ``pdfindex`` command line: one subcommand per job, errors as one clear line."""
if __name__ != "pdfindex.cli":  # the top-level cli/ is a link for people, not a second name
    raise ImportError(f"import pdfindex.cli, not {__name__} (README, Layout)")
