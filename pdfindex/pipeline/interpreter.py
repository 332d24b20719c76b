"""The content-stream interpreter: operator dispatch, graphics and text state, glyph
positioning (ISO 32000-1 §8.4, §9.3, §9.4), Form XObjects (R9).

One ``Interpreter`` runs one page. Glyphs come out in content order, with each
form's glyphs spliced in at its ``Do`` (R14). The interpreter never raises for bad
content: a bad operator is skipped, an unknown font is replaced by a stand-in whose
glyphs are unresolved, and each skipped thing is recorded in ``problems``.

Memory: with a ``sink``, the records held are handed over (and dropped) whenever
more than ``Params.max_held_glyphs`` accumulate, so a page of millions of glyphs
holds no more than that many at once; ActualText spans and marked-content starts
are counted in absolute glyph numbers (``base`` + position in ``glyphs``).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pdfminer.pdftypes import PDFObjRef, PDFStream, resolve1
from pdfminer.psparser import PSLiteral

from .content import literal_str, operations
from .errors import DAMAGE, Damaged, Problem, ProblemCode, brief, caught
from .values import strict_matrix, strict_number, text_string
from .fonts import Font, MissingFont, load_font
from .geometry import IDENTITY, Matrix, mult, unit
from .glyph import Glyph
from .images import PlacedImage
from .params import Params
from .streams import current_budget, read_stream


_new_tuple = tuple.__new__


class TextState:
    """The text state parameters of §9.3, part of the graphics state (R8)."""

    __slots__ = ("char_spacing", "font", "font_name", "leading", "render", "rise", "scale", "size", "word_spacing")

    def __init__(self) -> None:
        self.font: Font | None = None
        self.font_name = ""
        self.size = 0.0
        self.char_spacing = 0.0
        self.word_spacing = 0.0
        self.scale = 1.0
        self.leading = 0.0
        self.render = 0
        self.rise = 0.0

    def copy(self) -> TextState:
        # Field by field: compiled by mypyc (setup.py), the class has no __slots__ to walk.
        other = TextState()
        other.font, other.font_name, other.size = self.font, self.font_name, self.size
        other.char_spacing, other.word_spacing, other.scale = self.char_spacing, self.word_spacing, self.scale
        other.leading, other.render, other.rise = self.leading, self.render, self.rise
        return other


FontCache = dict[object, Font]
#: Receives held glyph records in content order with the ActualText spans among
#: them (indices relative to the list); see Interpreter.flush.
GlyphSink = Callable[[list[Glyph], list[tuple[int, int, str]]], None]


class Interpreter:
    """Interprets one page's content, forms included, into glyph records."""

    def __init__(self, params: Params, fonts: FontCache, problems: list[str], sink: GlyphSink | None = None) -> None:
        self.params = params
        self.fonts = fonts
        self.problems = problems
        self.sink = sink
        self.glyphs: list[Glyph] = []
        #: Glyphs already handed to the sink: the absolute number of glyphs[0].
        self.base = 0
        self.form_data: dict[object, bytes] = {}
        self.ctm: Matrix = IDENTITY
        self.ts = TextState()
        self.tm: Matrix = IDENTITY
        self.tlm: Matrix = IDENTITY
        self.stack: list[tuple[Matrix, TextState]] = []
        self.resources: dict[str, Any] = {}
        self.in_form = False
        self.active_forms: set[object] = set()
        self.depth = 0
        self.form_calls = 0
        self.reported: set[str] = set()
        # Open marked-content sections: (ActualText or None, first glyph index).
        self.marked: list[tuple[str | None, int]] = []
        # Closed ActualText spans (§14.9.4): glyph index range and the text that
        # stands for those glyphs in page text; the glyph records stay as drawn (R2).
        self.actual_text: list[tuple[int, int, str]] = []
        #: The object index (R1) of the operator being run; a showing operator's
        #: string operand is just before it.
        self.token = 0
        #: The images drawn, in drawing order (images.py), at most max_page_images.
        self.images: list[PlacedImage] = []

    # ---- entry points -------------------------------------------------------

    def run_page(self, data: bytes, resources: dict[str, Any], ctm: Matrix) -> list[Glyph]:
        self.ctm = ctm
        self.resources = resources
        self._execute(data)
        return self.glyphs

    def _execute(self, data: bytes) -> None:
        """Call each operator's handler with its operands, the last ``arity`` objects
        before it (§7.8.2): extra ones are ignored, too few skip the operator. Runs of
        path and colour operators, all ignored here, are not even handed over
        (``skip_paths``)."""
        problems = self.problems
        strict = self.params.strict
        for op, args, index in operations(data, problems, self.params, skip_paths=True):
            entry = _OPERATORS.get(op)
            if entry is None:
                if op not in _IGNORED:
                    self._once(ProblemCode.CONTENT_SYNTAX, f"unknown operator {op.decode('latin-1')!r}")
                continue
            handler, arity = entry
            count = len(args)
            if count < arity:
                self._once(ProblemCode.CONTENT_SYNTAX, f"operator {op.decode('latin-1')} with too few operands "
                                                       f"(token {index})")
                continue
            self.token = index
            try:
                handler(self, *args[count - arity:])
            except DAMAGE as exc:
                if isinstance(exc, RecursionError):
                    raise  # a page-level problem (extract_page), not one operator's
                what = f"operator {op.decode('latin-1')} skipped at token {index}: "
                self._add(Problem(ProblemCode.CONTENT_SYNTAX, what + str(exc)) if isinstance(exc, Damaged)
                          else caught(ProblemCode.CONTENT_SYNTAX, what, exc, strict))

    def _once(self, code: ProblemCode, text: str) -> None:
        # checked on the raw text first: an operator repeated a million times makes
        # one Problem (4 µs each), not a million
        if text not in self.reported and len(self.reported) < self.params.max_page_problems:
            self.reported.add(text)
            self.problems.append(Problem(code, text))

    def _add(self, problem: Problem) -> None:
        """Record a problem once per page (an operator repeated a million times is
        one line), at most max_page_problems distinct ones."""
        if problem not in self.reported and len(self.reported) < self.params.max_page_problems:
            self.reported.add(str(problem))
            self.problems.append(problem)

    # ---- graphics state -----------------------------------------------------

    def do_q(self) -> None:
        self.stack.append((self.ctm, self.ts.copy()))

    def do_Q(self) -> None:
        if self.stack:
            self.ctm, self.ts = self.stack.pop()
        else:
            self._once(ProblemCode.CONTENT_SYNTAX, "Q without matching q")

    def do_cm(self, a: object, b: object, c: object, d: object, e: object, f: object) -> None:
        self.ctm = mult(strict_matrix((a, b, c, d, e, f)), self.ctm)

    # ---- text objects and state ----------------------------------------------

    def do_BT(self) -> None:
        self.tm = self.tlm = IDENTITY

    def do_ET(self) -> None:
        pass

    def do_Tc(self, spacing: object) -> None:
        self.ts.char_spacing = strict_number(spacing)

    def do_Tw(self, spacing: object) -> None:
        self.ts.word_spacing = strict_number(spacing)

    def do_Tz(self, scale: object) -> None:
        self.ts.scale = strict_number(scale) / 100.0

    def do_TL(self, leading: object) -> None:
        self.ts.leading = strict_number(leading)

    def do_Tr(self, render: object) -> None:
        self.ts.render = int(strict_number(render))

    def do_Ts(self, rise: object) -> None:
        self.ts.rise = strict_number(rise)

    def do_Tf(self, fontid: object, fontsize: object) -> None:
        if not isinstance(fontid, PSLiteral):
            raise Damaged(f"font name expected, got {brief(repr(fontid), 60)}")
        self.ts.size = strict_number(fontsize)
        self.ts.font_name = literal_str(fontid)
        self.ts.font = self._font(self.ts.font_name)

    def _font(self, name: str) -> Font:
        fonts = resolve1(self.resources.get("Font"))
        spec = fonts.get(name) if isinstance(fonts, dict) else None
        if spec is None:
            self._once(ProblemCode.FONT_MISSING, f"unknown font resource /{name}")
            key: object = ("missing", name)
        else:
            key = spec.objid if isinstance(spec, PDFObjRef) else id(resolve1(spec))
        font = self.fonts.get(key)
        if font is None:
            font = MissingFont(name, self.params) if spec is None else load_font(name, spec, self.params, self.problems)
            self.fonts[key] = font
        return font

    def do_Td(self, tx: object, ty: object) -> None:
        x, y = strict_number(tx), strict_number(ty)
        a, b, c, d, e, f = self.tlm
        self.tm = self.tlm = (a, b, c, d, x * a + y * c + e, x * b + y * d + f)

    def do_TD(self, tx: object, ty: object) -> None:
        self.ts.leading = -strict_number(ty)
        self.do_Td(tx, ty)

    def do_Tm(self, a: object, b: object, c: object, d: object, e: object, f: object) -> None:
        self.tm = self.tlm = strict_matrix((a, b, c, d, e, f))

    def do_Tstar(self) -> None:
        self.do_Td(0.0, -self.ts.leading)

    # ---- text showing ----------------------------------------------------------

    def do_Tj(self, string: object) -> None:
        self._show([string], self.token - 1)

    def do_TJ(self, items: object) -> None:
        if not isinstance(items, list):
            raise Damaged("TJ needs an array")
        self._show(items, self.token - 1)

    def do_quote(self, string: object) -> None:
        self.do_Tstar()
        self._show([string], self.token - 1)

    def do_dquote(self, word_spacing: object, char_spacing: object, string: object) -> None:
        self.ts.word_spacing = strict_number(word_spacing)
        self.ts.char_spacing = strict_number(char_spacing)
        self.do_Tstar()
        self._show([string], self.token - 1)

    def _show(self, items: list[object], token: int) -> None:
        """Place the glyphs of a Tj/TJ operand (§9.4.4) and advance the text matrix."""
        ts = self.ts
        font = ts.font
        if font is None:
            self._once(ProblemCode.FONT_MISSING, "text shown before any Tf")
            font = ts.font = self._font(ts.font_name or "(none)")
        if self.in_form:
            token = -1
        held = len(self.glyphs)
        if self.base + held >= self.params.max_page_glyphs:
            self._once(ProblemCode.CAP_HIT,
                       f"more than {self.params.max_page_glyphs} glyphs on this page; the rest skipped")
            return
        if held >= self.params.max_held_glyphs and self.sink is not None:
            self.flush()
        if font.vertical:
            self._place_vertical(font, items, token)
        else:
            self._place_horizontal(font, items, token)

    def _place_horizontal(self, font: Font, items: list[object], token: int) -> None:
        """Horizontal writing (§9.4.4): advance along text-space x by width·Tfs + Tc
        (+ Tw after a single-byte code 32), all scaled by Tz; TJ numbers move back."""
        ts = self.ts
        size = ts.size
        tc, tw, th, rise = ts.char_spacing, ts.word_spacing, ts.scale, ts.rise
        a, b, c, d, e, f = mult(self.tm, self.ctm)
        tm = self.tm
        name = ts.font_name
        render = ts.render
        glyphs = self.glyphs
        asc, desc = font.ascent * size, font.descent * size
        pos = 0.0  # offset along the text space x axis
        sign = -1.0 if size * th < 0 else 1.0
        direction = unit(a * sign, b * sign)
        cross = math.hypot(c, d)
        height = (font.ascent - font.descent) * abs(size) * cross
        eff_size = abs(size) * cross
        box = (c * desc, d * desc, c * asc, d * asc)
        cx, cy = c * rise + e, d * rise + f
        user_rise = rise * (d * direction[0] - c * direction[1])  # projected on the normal
        scale = size * th
        tc_th, tw_th = tc * th, tw * th
        append = glyphs.append
        for item in items:
            if isinstance(item, bytes):
                for code, nbytes, text, width, is_space, _, _, _ in font.decode(item):
                    w = width * scale
                    adv = w + tc_th + tw_th if is_space else w + tc_th
                    ox, oy = a * pos + cx, b * pos + cy
                    gx, gy = ox + a * w, oy + b * w
                    # tuple.__new__ skips NamedTuple's Python-level __new__ (hot path).
                    append(_new_tuple(Glyph, (
                        text, code, nbytes, name, eff_size,
                        box, ox, oy, ox + a * adv, oy + b * adv, gx, gy,
                        direction, False, height, user_rise, render, token,
                    )))
                    pos += adv
            elif isinstance(item, (int, float)) and not isinstance(item, bool):
                pos -= item / 1000.0 * size * th
        self.tm = (tm[0], tm[1], tm[2], tm[3], pos * tm[0] + tm[4], pos * tm[1] + tm[5])

    def _place_vertical(self, font: Font, items: list[object], token: int) -> None:
        """Vertical writing (§9.7.4.3): advance down text-space y by w1·Tfs + Tc (+ Tw)."""
        ts = self.ts
        size = ts.size
        tc, tw, th, rise = ts.char_spacing, ts.word_spacing, ts.scale, ts.rise
        a, b, c, d, e, f = mult(self.tm, self.ctm)
        tm = self.tm
        name = ts.font_name
        render = ts.render
        glyphs = self.glyphs
        pos = 0.0  # offset along the text space y axis
        sign = -1.0 if size < 0 else 1.0
        direction = unit(-c * sign, -d * sign)
        across = math.hypot(a, b)
        height = abs(size) * across
        eff_size = abs(size) * math.hypot(c, d)
        for item in items:
            if isinstance(item, bytes):
                for info in font.decode(item):
                    w1 = info.w1 * size
                    adv = w1 + tc + (tw if info.is_space else 0.0)
                    # §9.7.4.3: the position is the vertical origin; the glyph box
                    # spans the horizontal advance around it and w1 below it.
                    x0, x1 = -info.vx * size * th, (info.width - info.vx) * size * th
                    y_top, y_glyph_end, y_end = pos + rise, pos + w1 + rise, pos + adv + rise
                    glyphs.append(Glyph(
                        info.text, info.code, info.nbytes, name, eff_size, (a * x0, b * x0, a * x1, b * x1),
                        c * y_top + e, d * y_top + f, c * y_end + e, d * y_end + f,
                        c * y_glyph_end + e, d * y_glyph_end + f, direction, True, height, 0.0, render, token,
                    ))
                    pos += adv
            elif isinstance(item, (int, float)) and not isinstance(item, bool):
                pos -= item / 1000.0 * size
        self.tm = (tm[0], tm[1], tm[2], tm[3], pos * tm[2] + tm[4], pos * tm[3] + tm[5])

    # ---- marked content (§14.6) ------------------------------------------------

    def flush(self) -> None:
        """Hand the held glyphs to the sink, up to where an open ActualText span
        starts (its glyphs are replaced as a whole later). A span that alone holds
        more than max_held_glyphs loses its ActualText, so memory stays bounded."""
        if self.sink is None:
            return
        end = self.base + len(self.glyphs)
        cut = end
        for k, (text, start) in enumerate(self.marked):
            if text is not None:
                if end - start >= self.params.max_held_glyphs:
                    self._once(ProblemCode.CAP_HIT,
                               f"ActualText span of more than {self.params.max_held_glyphs} glyphs ignored")
                    self.marked[k] = (None, start)
                    continue
                cut = start
                break
        count = cut - self.base
        if count <= 0:
            return
        chunk = self.glyphs[:count]
        spans = [(s - self.base, e - self.base, t) for s, e, t in self.actual_text if e <= cut]
        self.actual_text = [span for span in self.actual_text if span[1] > cut]
        del self.glyphs[:count]
        self.base = cut
        self.sink(chunk, spans)

    def finish(self) -> None:
        """Hand over whatever is still held (the end of the page)."""
        if self.sink is None:
            return
        self.marked.clear()
        chunk = self.glyphs
        spans = [(s - self.base, e - self.base, t) for s, e, t in self.actual_text]
        self.base += len(chunk)
        self.glyphs, self.actual_text = [], []
        self.sink(chunk, spans)

    def do_BMC(self, tag: object) -> None:
        self.marked.append((None, self.base + len(self.glyphs)))

    def do_BDC(self, tag: object, props: object) -> None:
        if isinstance(props, PSLiteral):
            named = resolve1(self.resources.get("Properties"))
            props = resolve1(named.get(props.name)) if isinstance(named, dict) else None
        actual = resolve1(props.get("ActualText")) if isinstance(props, dict) else None
        text = text_string(actual) if isinstance(actual, bytes) else None
        self.marked.append((text, self.base + len(self.glyphs)))

    def do_EMC(self) -> None:
        if not self.marked:
            return
        text, start = self.marked.pop()
        if text is None or any(t is not None for t, _ in self.marked):
            return  # no ActualText, or an enclosing span replaces this one anyway
        end = self.base + len(self.glyphs)
        if start < end:
            self.actual_text.append((start, end, text))

    # ---- XObjects ---------------------------------------------------------------

    def do_Do(self, xobjid: object) -> None:
        if not isinstance(xobjid, PSLiteral):
            raise Damaged(f"XObject name expected, got {brief(repr(xobjid), 60)}")
        name = literal_str(xobjid)
        xobjects = resolve1(self.resources.get("XObject"))
        ref = xobjects.get(name) if isinstance(xobjects, dict) else None
        xobj = resolve1(ref)
        if xobj is None:
            self._once(ProblemCode.XOBJECT_MISSING, f"unknown XObject /{name}")
            return
        if not isinstance(xobj, PDFStream):
            return
        subtype = resolve1(xobj.get("Subtype"))
        if isinstance(subtype, PSLiteral) and subtype.name == "Image":
            self._place_image(name, ref.objid if isinstance(ref, PDFObjRef) else 0, xobj.attrs)
            return
        if not (isinstance(subtype, PSLiteral) and subtype.name == "Form"):
            return
        key = ref.objid if isinstance(ref, PDFObjRef) else id(xobj)
        if key in self.active_forms:
            self._once(ProblemCode.FORM_CYCLE, f"form /{name} draws itself; not entered again")
            return
        if self.depth >= self.params.max_form_depth:
            self._once(ProblemCode.CAP_HIT,
                       f"form /{name} nested deeper than {self.params.max_form_depth} levels; skipped")
            return
        self.form_calls += 1
        if self.form_calls > self.params.max_form_calls:
            self._once(ProblemCode.CAP_HIT,
                       f"more than {self.params.max_form_calls} form calls on this page; the rest skipped")
            return
        self.run_form(xobj, key, self.ctm, f"form /{name}")

    def do_BI(self, attrs: object) -> None:
        if isinstance(attrs, dict):
            self._place_image("inline", 0, attrs)

    def _place_image(self, name: str, objid: int, attrs: dict[str, Any]) -> None:
        """Record where an image is drawn (images.py); its pixels are not read here.
        An inline image's keys may be abbreviated (/W, /H: §8.9.7)."""
        if len(self.images) >= self.params.max_page_images:
            self._once(ProblemCode.CAP_HIT, f"more than {self.params.max_page_images} images on this page; "
                                            "the rest not considered for OCR")
            return
        width = resolve1(attrs.get("Width", attrs.get("W")))
        height = resolve1(attrs.get("Height", attrs.get("H")))
        if isinstance(width, int) and isinstance(height, int) and width > 0 and height > 0:
            self.images.append(PlacedImage(name, objid, width, height, self.ctm, self.in_form))

    def run_form(self, xobj: PDFStream, key: object, ctm: Matrix, label: str) -> None:
        """Interpret a Form XObject with its /Matrix × ``ctm`` (§8.10.1), in the text
        state of the caller, its glyphs spliced in here with token -1 (R9). A form
        drawn again is decoded once per page, but each draw counts against the
        page's data budget (the work is in interpreting it)."""
        data = self.form_data.get(key)
        if data is not None:
            budget = current_budget()
            if budget is not None and not budget.charge(label, len(data), self.problems):
                return
        else:
            data = read_stream(xobj, label, self.problems)
            if data is None:
                return
            self.form_data[key] = data
        matrix = resolve1(xobj.get("Matrix"))
        form_matrix = IDENTITY
        if isinstance(matrix, list) and len(matrix) == 6:
            form_matrix = strict_matrix([resolve1(v) for v in matrix])
        form_resources = resolve1(xobj.get("Resources"))
        saved = (self.ctm, self.ts.copy(), self.tm, self.tlm, self.resources, self.in_form, list(self.stack))
        self.ctm = mult(form_matrix, ctm)
        if isinstance(form_resources, dict):  # §7.8.3: else borrow the drawing stream's
            self.resources = form_resources
        self.in_form = True
        self.active_forms.add(key)
        self.depth += 1
        try:
            self._execute(data)
        finally:
            self.depth -= 1
            self.active_forms.discard(key)
            self.ctm, self.ts, self.tm, self.tlm, self.resources, self.in_form, self.stack = saved


#: Operator → (handler, operand count), built once. A handler names its operands
#: and is called with the last ``count`` operands before its operator.
_OPERATORS: dict[bytes, tuple[Callable[..., None], int]] = {
    b"q": (Interpreter.do_q, 0), b"Q": (Interpreter.do_Q, 0), b"cm": (Interpreter.do_cm, 6),
    b"BT": (Interpreter.do_BT, 0), b"ET": (Interpreter.do_ET, 0),
    b"Tc": (Interpreter.do_Tc, 1), b"Tw": (Interpreter.do_Tw, 1), b"Tz": (Interpreter.do_Tz, 1),
    b"TL": (Interpreter.do_TL, 1), b"Tf": (Interpreter.do_Tf, 2), b"Tr": (Interpreter.do_Tr, 1),
    b"Ts": (Interpreter.do_Ts, 1), b"Td": (Interpreter.do_Td, 2), b"TD": (Interpreter.do_TD, 2),
    b"Tm": (Interpreter.do_Tm, 6), b"T*": (Interpreter.do_Tstar, 0),
    b"Tj": (Interpreter.do_Tj, 1), b"TJ": (Interpreter.do_TJ, 1),
    b"'": (Interpreter.do_quote, 1), b'"': (Interpreter.do_dquote, 3),
    b"Do": (Interpreter.do_Do, 1), b"BI": (Interpreter.do_BI, 1),
    b"BMC": (Interpreter.do_BMC, 1), b"BDC": (Interpreter.do_BDC, 2), b"EMC": (Interpreter.do_EMC, 0),
}

# Operators that do not affect text: drawing, colour, clipping, marked content,
# shading, images, Type 3 glyph metrics and compatibility sections.
_IGNORED = frozenset(
    op.encode()
    for op in (
        "w J j M d ri i gs m l c v y h re S s f F f* B B* b b* n W W* "
        "CS cs SC SCN sc scn G g RG rg K k sh ID EI d0 d1 MP DP BX EX"
    ).split()
)
