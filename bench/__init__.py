"""The benchmarks: scripts that time pdfindex against the tools a user would
otherwise pick, over generated (bench/corpus.py) or shared corpora.

Every bench runs from the project root as ``.venv/bin/python -m bench.NAME``: the
package as installed (``pip install -e .``), the test helpers (``tests.pdfwriter``)
and the other benches import by their names, and no bench edits ``sys.path``. The
benches that import only the package (fuzz, known_item, search_speed, startup) also
run as ``.venv/bin/python bench/NAME.py``. Each script's docstring gives its quickest
form; tests/test_bench_*.py run them.
"""
