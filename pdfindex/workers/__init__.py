if __name__ != "pdfindex.workers":  # the top-level workers/ is a link for people, not a second name
    raise ImportError(f"import pdfindex.workers, not {__name__} (README, Layout)")
