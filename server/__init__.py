"""The HTTP side of pdfindex: ``pdfindex serve``, a JSON API over the index and a search page
(issue 10). Imported only by ``serve``: the other commands start without it."""
