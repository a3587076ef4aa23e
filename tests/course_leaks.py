"""What an exercise's answer looks like when it leaks: its value spelt in every usual way (for a
search of a notebook's text), and a probe that finds it in the kernel's namespace.

Used by tests/test_course_exercises.py on the student edition, with the expected values the
checks record when ``LUCID_EXERCISE_RECORD=1`` (see ``lucid_viz.exercises._record``).
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Iterator
from typing import Any

import numpy as np

RECORD_MIME = "application/vnd.lucid.expected+json"
MAX_ENTRIES = 16  # the entries of a longer array are not searched for one by one


def numbers(value: Any) -> Iterator[float | tuple]:
    """The numbers of an expected value worth a search: those a student could not guess by
    chance (not True/False, not a short number such as 2, 0.5 or 24).  A short list of whole
    numbers (a shape) is searched as a whole: (1, 128, 8, 8)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, dict):
        for v in value.values():
            yield from numbers(v)
        return
    if isinstance(value, list):
        if _rectangular(value) and 1 < len(value) <= 8 and all(
                isinstance(v, int) and not isinstance(v, bool) for v in value):
            yield tuple(value)
            return
        flat = np.asarray(value, dtype=object).ravel() if _rectangular(value) else None
        if flat is not None and flat.size > MAX_ENTRIES:
            return
        for v in value:
            yield from numbers(v)
        return
    if isinstance(value, (int, float)) and math.isfinite(value) and _distinctive(float(value)):
        yield float(value)


def _rectangular(value: list) -> bool:
    try:
        return np.asarray(value, dtype=float).dtype == float
    except (TypeError, ValueError):
        return False


def _distinctive(x: float) -> bool:
    if x == int(x):
        return abs(x) >= 100 and x % 100 != 0
    return len(f"{abs(x):.10g}".replace(".", "").lstrip("0").rstrip("0")) >= 3


def spellings(x: float) -> set[str]:
    """``x`` as a notebook might print it: 11689512, 11,689,512, 11_689_512, 1.1689512e7,
    1.17e+07, 11.7M, 11.69 million; 1.74693, 1.747, 1.75e+00..."""
    out: set[str] = set()
    a = abs(x)
    if a == int(a):
        n = int(a)
        out |= {str(n), f"{n:,}", f"{n:_}", f"{n:,}".replace(",", " "),
                f"{n:,}".replace(",", "\u202f"), f"{n:,}".replace(",", "\u2009")}
        for k in range(1, 9):
            mantissa, exp = f"{a:.{k}e}".split("e")
            if float(f"{mantissa}e{exp}") == a or k >= 2:
                out |= {f"{mantissa}e{exp}", f"{mantissa}e{int(exp)}", f"{mantissa}E{exp}"}
        for scale, names in ((1e6, ("M", " M", " million")), (1e3, ("k", "K", " thousand"))):
            if a >= scale * 10 if scale == 1e3 else a >= scale:
                for d in (1, 2):
                    out |= {f"{a / scale:.{d}f}{name}" for name in names}
    else:
        for k in range(3, 11):
            text = f"{a:.{k}g}"
            if len(text.replace(".", "").lstrip("0").rstrip("0")) >= 3:
                out.add(text)
        for d in range(1, 7):
            text = f"{a:.{d}f}"
            if len(text.replace(".", "").lstrip("0")) >= 3 and float(text) != 0:
                out.add(text)
        out.add(repr(a))
    if x < 0:
        out = {s for t in out for s in (f"-{t}", f"−{t}")}
    return out


def pattern(x: float | tuple) -> re.Pattern:
    if isinstance(x, tuple):  # a shape: (1, 128, 8, 8) or [1, 128, 8, 8], spaces free
        inner = r",\s*".join(str(v) for v in x)
        return re.compile(r"[(\[]\s*" + inner + r"\s*,?\s*[)\]]")
    alternatives = sorted(spellings(x), key=len, reverse=True)
    return re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, alternatives)) + r")(?![\d])")


def _text_of_markup(data: str) -> str:
    """HTML or SVG (or JSON holding them) as the words it shows: tags and their attributes
    (coordinates, sizes, colours) dropped."""
    return html.unescape(re.sub(r"<[^>]*>", " ", data))


def visible_text(nb: dict) -> str:
    """What a student can read in a notebook: cell sources, text outputs, the text of HTML and
    SVG outputs (not their markup, whose coordinates are numbers too), metadata."""
    # (the widgets' saved state holds the stepper's frames: their text counts, not the
    # coordinates of their markup)
    parts = [_text_of_markup(json.dumps(nb.get("metadata", {}), ensure_ascii=False))]
    for cell in nb["cells"]:
        src = cell["source"]
        parts.append(src if isinstance(src, str) else "".join(src))
        parts.append(json.dumps(cell.get("metadata", {}), ensure_ascii=False))
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                parts.append(out.get("evalue", ""))
            text = out.get("text")
            if text:
                parts.append(text if isinstance(text, str) else "".join(text))
            for mime, data in out.get("data", {}).items():
                data = data if isinstance(data, str) else "".join(data) \
                    if isinstance(data, list) else json.dumps(data)
                if mime == RECORD_MIME or mime.startswith("image/png"):
                    continue
                if mime in ("text/html", "image/svg+xml"):
                    data = _text_of_markup(data)
                elif not (mime.startswith("text/") or mime.endswith("json")):
                    continue
                parts.append(data)
    return "\n".join(parts)


# The probe runs in the student's kernel: before a check it notes what the namespace holds
# (by path and identity), after it reports what is new and equals an expected value the check
# recorded. It looks two levels deep (a tensor's .grad, a list's items, an object's attributes)
# and into the last traceback's frames.
PROBE_SETUP = r'''
def __leak_reach__():
    import sys, types
    import numpy as np
    from lucid.tensor import Tensor
    seen = {}
    def visit(path, value, depth):
        if isinstance(value, (types.ModuleType, type)):
            return
        if callable(value) and not isinstance(value, Tensor):
            return
        if isinstance(value, (bool, str, bytes)) or value is None:
            return
        seen[path] = value
        if depth == 0:
            return
        if isinstance(value, Tensor):
            if value.grad is not None:
                visit(path + ".grad", value.grad, depth - 1)
        elif isinstance(value, (list, tuple)) and len(value) <= 64:
            for i, v in enumerate(value):
                visit(f"{path}[{i}]", v, depth - 1)
        elif isinstance(value, dict) and len(value) <= 64:
            for k, v in list(value.items()):
                visit(f"{path}[{k!r}]", v, depth - 1)
        elif hasattr(value, "__dict__") and not isinstance(value, np.ndarray):
            for k, v in list(vars(value).items())[:64]:
                visit(f"{path}.{k}", v, depth - 1)
    for name, value in list(globals().items()):
        if not name.startswith("__leak"):
            visit(name, value, 2)
    tb = getattr(sys, "last_traceback", None)
    while tb is not None:  # the frames of the notebook's code and of the checks (not IPython's)
        code = tb.tb_frame.f_code
        if not any(part in code.co_filename for part in ("IPython", "ipykernel", "asyncio")):
            for k, v in tb.tb_frame.f_locals.items():
                visit(f"<traceback {code.co_name}>.{k}", v, 1)
        tb = tb.tb_next
    return seen

def __leak_find__(before):
    import json
    import numpy as np
    from lucid.tensor import Tensor
    from lucid_viz import exercises
    def arrays(value):
        if isinstance(value, dict):
            for v in value.values():
                yield from arrays(v)
        elif isinstance(value, (list, tuple)) and not all(
                isinstance(v, (int, float)) for v in value):
            for v in value:
                yield from arrays(v)
        elif not isinstance(value, (bool, str)) and value is not None:
            try:
                a = np.asarray(value.numpy() if isinstance(value, Tensor) else value, dtype=float)
            except (TypeError, ValueError):
                return
            if a.size and np.all(np.isfinite(a)) and not np.all(np.isin(a, (-1.0, 0.0, 1.0))):
                yield a
    expected = [(name, a) for name, value in exercises._recorded for a in arrays(value)]
    exercises._recorded.clear()
    leaks = []
    for path, value in __leak_reach__().items():
        if path in before and before[path] is value:
            continue
        try:
            got = np.asarray(value.numpy() if isinstance(value, Tensor) else value, dtype=float)
        except (TypeError, ValueError):
            continue
        for name, a in expected:
            if got.size == a.size and got.size and np.allclose(got.reshape(a.shape), a):
                leaks.append(f"{path} holds the expected value of {name}")
    return json.dumps(leaks)
'''
PROBE_BEFORE = "__leak_before__ = __leak_reach__()"
PROBE_AFTER = "print('LEAKS', __leak_find__(__leak_before__)); del __leak_before__"
