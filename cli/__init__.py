"""The ``pdfindex`` command line: one subcommand per job, errors as one clear line."""
