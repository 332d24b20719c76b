"""The built-in encoding of an embedded CFF (Type 1C) font program: code → glyph
name (Adobe Technical Note #5176, sections 12-13).

Distiller embeds Type 1C fonts with no /Encoding in the font dictionary, so ligature
glyphs (/fi at code 3, say) are only named inside the font program. pdfminer.six
has a CFF reader, but it swaps codes and glyph ids in both encoding formats, so
we read the few structures we need ourselves.
"""
from __future__ import annotations

import struct

from pdfminer.pdffont import CFFFont

_STANDARD_STRINGS: tuple[str, ...] = tuple(CFFFont.STANDARD_STRINGS)


class _Reader:
    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def index(self, pos: int) -> tuple[list[bytes], int]:
        """An INDEX at pos: its items and the offset just after it."""
        data = self.data
        (count,) = struct.unpack_from(">H", data, pos)
        if count == 0:
            return [], pos + 2
        off_size = data[pos + 2]
        offsets = [int.from_bytes(data[pos + 3 + i * off_size:pos + 3 + (i + 1) * off_size], "big")
                   for i in range(count + 1)]
        base = pos + 3 + (count + 1) * off_size - 1
        return [data[base + offsets[i]:base + offsets[i + 1]] for i in range(count)], base + offsets[-1]


def _top_dict(data: bytes) -> dict[int, list[float]]:
    """Operands by operator of a Top DICT (only integer operands matter here)."""
    result: dict[int, list[float]] = {}
    operands: list[float] = []
    i, n = 0, len(data)
    while i < n:
        b0 = data[i]
        if b0 <= 21:
            op = b0
            i += 1
            if b0 == 12:
                op = 1200 + data[i]
                i += 1
            result[op] = operands
            operands = []
        elif b0 == 28:
            operands.append(struct.unpack_from(">h", data, i + 1)[0])
            i += 3
        elif b0 == 29:
            operands.append(struct.unpack_from(">i", data, i + 1)[0])
            i += 5
        elif b0 == 30:  # real number: skip its nibbles
            i += 1
            while i < n and (data[i] & 0x0F) != 0x0F and (data[i] >> 4) != 0x0F:
                i += 1
            i += 1
            operands.append(0.0)
        elif 32 <= b0 <= 246:
            operands.append(b0 - 139)
            i += 1
        elif 247 <= b0 <= 250:
            operands.append((b0 - 247) * 256 + data[i + 1] + 108)
            i += 2
        elif 251 <= b0 <= 254:
            operands.append(-(b0 - 251) * 256 - data[i + 1] - 108)
            i += 2
        else:
            i += 1
    return result


def cff_builtin_encoding(program: bytes) -> dict[int, str]:
    """Code → glyph name of a CFF font's own encoding; empty when it uses the
    Standard or Expert encoding (offset 0 or 1), is CID-keyed, or cannot be read."""
    try:
        reader = _Reader(program)
        header_size = program[2]
        _, pos = reader.index(header_size)  # Name INDEX
        top_dicts, pos = reader.index(pos)
        strings, _ = reader.index(pos)
        top = _top_dict(top_dicts[0])
        if 1230 in top:  # ROS: CID-keyed, codes are CIDs
            return {}
        encoding_pos = int(top.get(16, [0])[0])
        charset_pos = int(top.get(15, [0])[0])
        charstrings, _ = reader.index(int(top[17][0]))
        if encoding_pos in (0, 1) or charset_pos in (0, 1, 2):
            return {}

        def name(sid: int) -> str:
            if sid < len(_STANDARD_STRINGS):
                return _STANDARD_STRINGS[sid]
            return strings[sid - len(_STANDARD_STRINGS)].decode("latin-1")

        gid_names = [".notdef"]
        fmt, pos = program[charset_pos], charset_pos + 1
        while len(gid_names) < len(charstrings):
            if fmt == 0:
                gid_names.append(name(struct.unpack_from(">H", program, pos)[0]))
                pos += 2
            else:
                first = struct.unpack_from(">H", program, pos)[0]
                if fmt == 1:
                    left = program[pos + 2]
                    pos += 3
                else:
                    left = struct.unpack_from(">H", program, pos + 2)[0]
                    pos += 4
                gid_names.extend(name(first + k) for k in range(left + 1))

        codes: dict[int, str] = {}
        fmt, pos = program[encoding_pos], encoding_pos + 1
        count = program[pos]
        pos += 1
        if fmt & 0x7F == 0:
            for gid in range(1, count + 1):
                codes[program[pos + gid - 1]] = gid_names[gid]
            pos += count
        else:
            gid = 1
            for _ in range(count):
                first, left = program[pos], program[pos + 1]
                pos += 2
                for code in range(first, first + left + 1):
                    if gid < len(gid_names):
                        codes[code] = gid_names[gid]
                    gid += 1
        if fmt & 0x80:  # supplements: extra codes for named glyphs
            for _ in range(program[pos]):
                code, sid = program[pos + 1], struct.unpack_from(">H", program, pos + 2)[0]
                codes[code] = name(sid)
                pos += 3
        return codes
    except (IndexError, KeyError, struct.error, ValueError):
        return {}
