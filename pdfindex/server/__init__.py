"""The HTTP side of pdfindex: ``pdfindex serve``, a JSON API over the index and a search page
(issue 10). Imported only by ``serve``: the other commands start without it."""
if __name__ != "pdfindex.server":  # the top-level server/ is a link for people, not a second name
    raise ImportError(f"import pdfindex.server, not {__name__} (README, Layout)")
