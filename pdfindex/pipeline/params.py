"""Every threshold of text assembly in one place, with the SPEC.md rule it comes from.

Thresholds scale with the glyph box height (R3), never with the Tf operand, so a
Word export that writes ``1 Tf`` and puts the real size in the text matrix behaves
like any other file.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

#: The one place the strict switch is read from the environment. The test suite
#: sets PDFINDEX_STRICT=1 so that our own bugs fail tests instead of becoming page
#: problems (see errors.triage); anything else (unset, 0) is the forgiving default.
STRICT_ENV = "PDFINDEX_STRICT"


def strict_from_env() -> bool:
    """True when ``PDFINDEX_STRICT`` is 1 (or true/yes/on)."""
    return os.environ.get(STRICT_ENV, "").strip().lower() in ("1", "true", "yes", "on")


_MB = 1 << 20


@dataclass(frozen=True, slots=True)
class Params:
    #: R11: a gap wider than this × the current glyph's box height is a word space.
    word_gap: float = 0.15
    #: R11 (beyond): a move this many box heights backwards along the line starts a
    #: new fragment and gets a space; smaller back-steps (composite accents, fake-bold
    #: overprints) do not.
    backward_jump: float = 2.0
    #: R11 (beyond), a line's own split (assemble.line_split): on a line not tracked as
    #: a whole that has at least ``split_min_gaps`` gaps between words' letters, all
    #: within ``split_letter_max`` or from ``split_word_min`` box heights (none
    #: between), the word gaps are those over the middle of the two groups, even
    #: under ``word_gap``: tightly justified text.
    split_min_gaps: int = 6
    split_letter_max: float = 0.04
    split_word_min: float = 0.08
    #: R12: a move across the writing direction wider than this × the larger box
    #: height of the two glyphs starts a new line.
    line_break: float = 0.5
    #: R12 (beyond): a string that moves across by more than this × the larger box
    #: height and back to its line's start begins a new line (tight leading).
    line_return: float = 0.3
    #: R9: nesting depth at which Form XObject recursion stops.
    max_form_depth: int = 12
    #: R17 (beyond): per-page budgets against hostile files. Forms that draw each
    #: other many times multiply without any cycle ("billion laughs"); past these
    #: limits the rest is skipped and reported.
    max_form_calls: int = 10_000
    #: Glyphs shown per page before the rest is skipped: bounds the CPU time of a
    #: page (2M glyphs take some seconds); memory is bounded by max_held_glyphs.
    max_page_glyphs: int = 2_000_000
    #: Glyph records held at once: past this many, the page text assembled so far
    #: is kept as text and its records are dropped, so memory stays flat however
    #: many glyphs a page draws (a record is ~0.4 KB; the densest real page of the
    #: corpus has under 7,000). Text is kept; only line grouping across the cut of a
    #: longer-than-this line, and column ordering of vertical runs across it, differ.
    max_held_glyphs: int = 100_000
    #: Decompressed bytes of one stream. Decoding stops at the cap (a 1 GiB Flate
    #: bomb is ~1 MB on disk); real content streams of the corpus are under 1 MB,
    #: drawings of maps and plans reach tens of MB.
    max_stream_bytes: int = 64 * _MB
    #: Decompressed bytes read for one page: content streams, each draw of a form,
    #: ToUnicode, encoding CMaps and font programs loaded for it. With the stream cap
    #: this keeps a page's peak memory near twice this (decoding, then joining).
    max_page_bytes: int = 64 * _MB
    #: Bytes of a CMap program (ToUnicode or encoding CMap) parsed; the largest real
    #: ones (full CJK fonts) are a few hundred KB.
    max_cmap_bytes: int = 8 * _MB
    #: Codes mapped by one CMap, ranges counted as one; a full two-byte CJK map has
    #: 65,536. Bounds the dictionaries a CMap program expands into.
    max_cmap_entries: int = 1 << 18
    #: CIDs given widths by one font's /W or /W2 (ranges expanded); 65,536 covers
    #: every two-byte CID. A /W of 20,000 wide ranges took 85 s before this cap.
    max_width_entries: int = 1 << 18
    #: Bytes of one string in a content stream; past it the string is cut. Real
    #: strings are words or lines (the corpus's longest: 110 bytes).
    max_string_bytes: int = 1 * _MB
    #: Items of one array or dictionary in a content stream, and operands waiting
    #: for their operator; a TJ array of the corpus has at most ~300.
    max_array_items: int = 100_000
    #: Arrays and dictionaries open inside each other in a content stream.
    max_nesting: int = 64
    #: Images recorded per page for OCR (images.py); a page tiled in thousands of
    #: strips is still measured by the first ones.
    max_page_images: int = 1000
    #: Problem lines kept per page (a stream of stray bytes would give millions).
    max_page_problems: int = 200
    #: R3: ascent and descent (in em) used when neither the font descriptor, the
    #: FontBBox nor the standard-14 metrics give a usable height.
    default_ascent: float = 0.8
    default_descent: float = -0.2
    #: R7 (beyond): a page whose glyph coverage is below this is flagged as needing
    #: OCR too, since its text layer cannot be trusted for search.
    ocr_coverage: float = 0.5
    #: R7 (beyond, plausibility.py): a page is suspect (its coverage is lowered and it
    #: needs OCR) when more than suspect_unreadable of its characters are unreadable
    #: (from suspect_min_chars characters on), or when its words mix scripts or lack
    #: vowels more often than real text would with a chance of suspect_chance, real
    #: text showing the trait in at most suspect_mixed_scripts, suspect_no_vowels of
    #: its words (so the share needed falls with the words: 10 of 10, a third of 1,000).
    suspect_unreadable: float = 0.2
    suspect_mixed_scripts: float = 0.2
    suspect_no_vowels: float = 0.25
    suspect_chance: float = 1e-6
    suspect_min_chars: int = 40
    #: ... or when its letters read as text once every code is moved by a constant:
    #: the log-likelihood ratio (in nats) of the moved text against the text as it is,
    #: its letters alone giving at least suspect_shift_letters of it. No page of the
    #: corpora passes 0.6 (tests/test_plausibility.py); the 14 words of issue 23, every
    #: code moved by 3, reach over 100.
    suspect_shift_evidence: float = 20.0
    suspect_shift_letters: float = 8.0
    #: R14 (beyond, threads.py): on a page with article beads the text follows the
    #: document's threads, bead by bead, then the text outside them in content
    #: order; False keeps content order everywhere (``--no-threads``).
    threads: bool = True
    #: Our own bugs raise instead of becoming page problems ("internal error").
    #: Default from PDFINDEX_STRICT (see strict_from_env); the test suite sets it.
    strict: bool = field(default_factory=strict_from_env)

    def __post_init__(self) -> None:
        if not 0 < self.word_gap < self.line_break:
            raise ValueError("word_gap must be positive and smaller than line_break")
        if not 0 <= self.split_letter_max < self.split_word_min <= self.word_gap:
            raise ValueError("a line's split needs 0 <= split_letter_max < split_word_min <= word_gap")
        if self.max_form_calls < 1 or self.max_page_glyphs < 1:
            raise ValueError("page budgets must be positive")
        if self.max_form_depth < 1:
            raise ValueError("max_form_depth must be at least 1")
        if not self.default_descent < 0 < self.default_ascent:
            raise ValueError("default ascent must be positive and descent negative")
        if not 0 <= self.ocr_coverage <= 1:
            raise ValueError("ocr_coverage is a fraction")
        if not (0 < self.suspect_chance < 1 and 0 < self.suspect_no_vowels < 1
                and 0 < self.suspect_mixed_scripts < 1):
            raise ValueError("suspect_chance and the word shares real text shows are fractions")
        for name in ("max_held_glyphs", "max_stream_bytes", "max_page_bytes", "max_cmap_bytes",
                     "max_cmap_entries", "max_width_entries", "max_string_bytes", "max_array_items",
                     "max_nesting", "max_page_problems", "max_page_images"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer")
        if self.max_held_glyphs < 2:
            raise ValueError("max_held_glyphs must be at least 2")


DEFAULT_PARAMS = Params()
