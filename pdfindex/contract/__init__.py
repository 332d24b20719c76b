"""The contract: what the layers say to each other, light enough for every one of
them to import. ``records`` (documents, pages, hits, options), ``enums`` (``Status``,
the sort orders), ``problems`` (``ProblemCode`` and the one page-problem type),
``limits`` (what the layers must agree on), ``shapes`` (the JSON of docs/json.md),
``options`` (the values the CLI and the server both read) and ``display`` (outside
text made safe to show). It imports nothing of pdfindex's other layers and none of
their engines (Whoosh, pdfminer, Celery, Redis): ``tests/test_layering.py`` checks.
"""
if __name__ != "pdfindex.contract":  # the top-level contract/ is a link for people, not a second name
    raise ImportError(f"import pdfindex.contract, not {__name__} (README, Layout)")
