"""OCR (issue 22): scanned pages become text, in the pipeline's own stage.

decide.py (which pages) → acquire.py (their pixels, from the page's own scan or a
render) → prepare.py (square pixels, resolution, turns) → choose.py (which way up,
which language) → engine.py (Tesseract) → words.py (word records and the page text).
page.py runs them for one page; ``extract(..., ocr=OcrSettings())`` for each page.
"""
