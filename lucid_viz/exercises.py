"""Self-checks for exercises: right or wrong, what kind of wrong, a hint, and never the answer.

The course's exercises end with a cell that checks the student's work::

    from lucid_viz.exercises import check, check_function, check_grad

    check("Exercise 2.1", dz_dx, x.grad, nudge="How many times is b used?",
          hint="b is used three times, so dz/db = 2b + 1; then db/dx = 2x.")
    check_function("Exercise 3.2", tanh_backward, reference, cases=[(0.5, 1.0), (-2.0, 3.0)])
    check_grad("Exercise 2.4", my_grad, lambda w: (w * w).sum(), [1.0, -2.0])

A check that passes prints ``✓ <name>: right``.  One that does not raises :class:`NotRightYet`,
whose message says *what* is off (not answered yet, the wrong kind of value, the wrong shape,
how many entries differ and where, which case fails) and, when it recognises it, the *kind* of
mistake: the right values in another order or transposed, the opposite sign, a factor of 2, ½
or N, off by one, a square or a square root too many.  A check can name mistakes of its own
(``mistakes={"the loss of step 1 only": wrong_value}``).  The expected value itself is never
printed, not even in the error: the point is to find it.

Hints come in steps: the ``nudge`` while the exercise is unanswered and at the first wrong
answer, the ``hint`` (the method) from the second wrong answer on.

In the student edition a check cell holds only :func:`run_check` and the check's code, packed
(so the expected value is not in plain sight); it runs in a scope of its own, so nothing the
check computes (``x_check.grad``...) stays in the notebook's namespace afterwards.
:func:`grade_check` runs a teacher's check the same way for ``course.py grade``.

Values are compared by kind: ``True``/``False`` exactly; text exactly; a set as a set (order
free); a dict key by key; a shape (a tuple of whole numbers) exactly; numbers, lists of
numbers, NumPy arrays and Lucid tensors as arrays, to ``rtol``/``atol`` (``numpy.isclose``);
other lists item by item; anything else (a dtype, a device name) with ``==``.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from lucid.autograd.functional import grad
from lucid.tensor import Tensor
from lucid.types import Float64

__all__ = ["NotRightYet", "check", "check_function", "check_grad", "grade_check", "pack",
           "run_check"]

_NOT_ANSWERED = "not answered yet: replace the `...` with your answer"
_NOT_WRITTEN = "not written yet: replace the `raise NotImplementedError(...)` line with your code"
_NUDGE = ("reread the exercise and the section just before it: the tool you need is there "
          "(a hint with the method comes after a second try)")

#: wrong tries per exercise name, in this kernel: the hint gets more precise with each
_misses: dict[str, int] = {}


class NotRightYet(AssertionError):
    """A self-check that did not pass: what is off, and a hint (never the expected value).

    In Jupyter it shows as two short lines instead of a traceback."""

    def __init__(self, name: str, problem: str, hint: str = "") -> None:
        self.name, self.problem, self.hint = name, problem, hint
        text = f"{name}: {problem}" + (f"\nHint: {hint}" if hint else "")
        super().__init__(text)

    def _render_traceback_(self) -> list[str]:  # IPython shows these lines as the traceback
        lines = [f"\x1b[1;31m✗ {self.name}\x1b[0m: {self.problem}"]
        if self.hint:
            lines.append(f"\x1b[1;33mHint:\x1b[0m {self.hint}")
        return lines


def _passed(name: str) -> None:
    print(f"✓ {name}: right")


def _fail(name: str, problem: str, nudge: str, hint: str) -> NotRightYet:
    """The error for a failed check, with the hint for this try: the nudge while unanswered and
    at the first wrong answer, the method (``hint``) from the second wrong answer on."""
    if problem in (_NOT_ANSWERED, _NOT_WRITTEN):
        return NotRightYet(name, problem, nudge or _NUDGE)
    _misses[name] = _misses.get(name, 0) + 1
    if _misses[name] >= 2 and hint:
        return NotRightYet(name, problem, hint)
    return NotRightYet(name, problem, nudge or (_NUDGE if hint else ""))


# ---------------------------------------------------------------------------------------------
# recording the expected values (for the course's leak test only; off unless asked for)


#: what :func:`_record` saw, for the leak test's probe in the kernel (empty unless recording)
_recorded: list[tuple[str, Any]] = []
#: set while :func:`run_check` runs a check once only to record every part's expected value
_record_only = False


def _recording() -> bool:
    return os.environ.get("LUCID_EXERCISE_RECORD") == "1"


def _record(name: str, expected: Any) -> None:
    """With ``LUCID_EXERCISE_RECORD=1`` in the environment (the course's tests set it), show
    every expected value as a ``application/vnd.lucid.expected+json`` output, so that a test can
    look for it in the student edition and the kernel.  Never on in a lab."""
    if not _recording():
        return
    from IPython.display import display

    _recorded.append((name, expected))

    def plain(v: Any) -> Any:
        if isinstance(v, (Tensor, np.ndarray, np.number)):
            return plain(_array(v).tolist())
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (bool, int, float, str)) or v is None:
            return v
        return repr(v)

    display({"application/vnd.lucid.expected+json": {"name": name, "expected": plain(expected)}},
            raw=True)


# ---------------------------------------------------------------------------------------------
# comparing one answer with one expected value


def _unanswered(value: Any) -> bool:
    if value is Ellipsis:
        return True
    return isinstance(value, (tuple, list)) and any(v is Ellipsis for v in value)


def _kind(value: Any) -> str:
    """How a student's value is described in a message: its type, and a short look at it."""
    if isinstance(value, Tensor):
        return f"a Tensor of shape {tuple(value.shape)}"
    if isinstance(value, np.ndarray):
        return f"a NumPy array of shape {value.shape}"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, complex, np.number)) and not _is_bool(value)


def _is_shape(value: Any) -> bool:
    return isinstance(value, tuple) and all(
        isinstance(v, (int, np.integer)) and not _is_bool(v) for v in value)


def _is_numeric(value: Any) -> bool:
    """A number, a NumPy array, a Tensor, or a (nested) list or tuple of those."""
    if _is_number(value) or isinstance(value, (np.ndarray, Tensor)):
        return True
    return (isinstance(value, (list, tuple)) and len(value) > 0
            and all(_is_numeric(v) for v in value))


def _array(value: Any) -> np.ndarray:
    """A numeric value as a NumPy array (a Tensor's data, on whichever device it lives)."""
    if isinstance(value, Tensor):
        return value.numpy()
    if isinstance(value, (list, tuple)):
        return np.asarray([_array(v) for v in value])
    return np.asarray(value)


def _ragged(value: Any) -> bool:
    """A list or tuple of arrays that do not share one shape (a pair of gradients, say)."""
    return isinstance(value, (list, tuple)) and len({np.shape(_array(v)) for v in value}) > 1


def _factor(ratio: float) -> str | None:
    """A ratio (yours / the answer) that is a common slip: 2, ½, a whole number N or 1/N."""
    for k in range(2, 10_001):
        if np.isclose(ratio, k, rtol=1e-6):
            return "twice the answer" if k == 2 else f"{k} times the answer"
        if np.isclose(ratio, 1 / k, rtol=1e-6):
            return "half the answer" if k == 2 else f"the answer divided by {k}"
        if k > abs(ratio) + 1 and k > 1 / max(abs(ratio), 1e-12) + 1:
            break
    return None


def _mistake(got: np.ndarray, exp: np.ndarray, rtol: float, atol: float) -> str | None:
    """The kind of a common mistake, recognised without saying the answer: another order, the
    opposite sign, a constant factor, off by one, a square or a square root too many."""
    def close(a: Any, b: Any) -> bool:
        return bool(np.all(np.isclose(a, b, rtol=rtol, atol=atol)))

    if exp.dtype == np.bool_ or not np.issubdtype(exp.dtype, np.number):
        return None
    exp = exp.astype(np.float64)
    got = got.astype(np.float64)
    nonzero = np.abs(exp) > atol
    if exp.size > 1 and close(np.sort(got, axis=None), np.sort(exp, axis=None)):
        return "the right values, in another order"
    if not nonzero.any():
        return None
    if close(got, -exp):
        return "the opposite sign"
    ratios = got[nonzero] / exp[nonzero]
    constant = close(got[~nonzero], 0) and np.ptp(ratios) <= 1e-6 * np.abs(ratios).max()
    kind = _factor(float(ratios[0])) if constant else None
    if kind in ("twice the answer", "half the answer"):
        return f"off by a constant factor: {kind}"
    if close(np.abs(got - exp), 1.0):
        return "off by one"
    trivial = np.all(np.isclose(np.abs(exp), 1.0) | ~nonzero)
    if not trivial and close(got, exp ** 2):
        return "the square of the answer (a square root missing?)"
    if not trivial and np.all(exp >= 0) and close(got, np.sqrt(exp)):
        return "the square root of the answer (a square too few?)"
    if kind:
        return f"off by a constant factor: {kind}"
    return None


def _compare_arrays(answer: Any, expected: Any, rtol: float, atol: float,
                    entries: str = "") -> str | None:
    exp = _array(expected)
    if _is_bool(answer) or (isinstance(answer, (list, tuple)) and not _is_numeric(answer)) \
            or not _is_numeric(answer):
        return f"the answer is a number or an array of numbers; yours is {_kind(answer)}"
    got = _array(answer)
    if got.shape != exp.shape:
        if got.size == exp.size == 1:
            got, exp = got.reshape(()), exp.reshape(())
        elif got.ndim == 2 and got.shape == exp.shape[::-1]:
            right = " and the right values" if np.allclose(got.T, exp, rtol=rtol, atol=atol) \
                else ""
            return f"your answer has shape {got.shape}: transposed{right}"
        else:
            return (f"your answer has shape {got.shape}; the answer has "
                    f"{'one number' if exp.size == 1 else 'another shape'}")
    if exp.dtype == np.bool_:
        bad = got.astype(bool) != exp
    else:
        if not np.all(np.isfinite(got)):
            return "your answer contains nan or inf"
        bad = ~np.isclose(got, exp, rtol=rtol, atol=atol)
    if not bad.any():
        return None
    kind = _mistake(got, exp, rtol, atol)
    what = f" ({entries})" if entries else ""
    if exp.size == 1:
        return f"not right yet{what}" + (f": {kind}" if kind else "")
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    where = first[0] if len(first) == 1 else first
    text = (f"{int(bad.sum())} of {exp.size} entries{what} are not right yet, the first at "
            f"index {where}")
    return text + (f": {kind}" if kind else "")


def _problem(answer: Any, expected: Any, rtol: float, atol: float,
             entries: str = "") -> str | None:
    """What is wrong with ``answer`` (in words that do not give ``expected`` away), or None:
    asked of the check for the kind of answer expected."""
    if _unanswered(answer):
        return _NOT_ANSWERED
    if answer is None and expected is not None:
        return "your answer is None (does a function forget to `return`?)"
    if _is_bool(expected):
        if not _is_bool(answer):
            return f"the answer is True or False; yours is {_kind(answer)}"
        return None if bool(answer) == bool(expected) else "not right yet"
    if isinstance(expected, str):
        if not isinstance(answer, str):
            return f"the answer is a piece of text (a str); yours is {_kind(answer)}"
        return None if answer == expected else "not right yet"
    if isinstance(expected, dict):
        return _dict_problem(answer, expected, rtol, atol)
    if isinstance(expected, (set, frozenset)):
        return _set_problem(answer, expected)
    if _is_shape(expected):
        return _shape_problem(answer, expected)
    if _is_numeric(expected) and not _ragged(expected):
        return _compare_arrays(answer, expected, rtol, atol, entries)
    if isinstance(expected, (list, tuple)):  # item by item (arrays of different shapes too)
        return _list_problem(answer, expected, rtol, atol, entries)
    if answer == expected:
        return None
    if type(answer) is not type(expected):
        return f"the answer is a {type(expected).__name__}; yours is {_kind(answer)}"
    return "not right yet"


def _dict_problem(answer: Any, expected: dict, rtol: float, atol: float) -> str | None:
    if not isinstance(answer, dict):
        return f"the answer is a dict; yours is {_kind(answer)}"
    for key, value in expected.items():
        if key not in answer:
            return f"{key!r} is missing"
        problem = _problem(answer[key], value, rtol, atol)
        if problem is not None:
            return f"{key}: {problem}"
    extra = [key for key in answer if key not in expected]
    return f"{extra[0]!r} should not be there" if extra else None


def _set_problem(answer: Any, expected: set | frozenset) -> str | None:
    if not isinstance(answer, (set, frozenset, list, tuple)):
        return f"the answer is a collection (a set or a list); yours is {_kind(answer)}"
    got = set(answer)
    if got == set(expected):
        return None
    extra, missing = len(got - set(expected)), len(set(expected) - got)
    parts = ([f"{extra} of your items should not be there"] if extra else []) + \
            ([f"{missing} items are missing"] if missing else [])
    return " and ".join(parts)


def _shape_problem(answer: Any, expected: tuple) -> str | None:
    if not _is_shape(tuple(answer) if isinstance(answer, list) else answer):
        return f"the answer is a shape, a tuple of whole numbers; yours is {_kind(answer)}"
    answer = tuple(answer)
    if len(answer) != len(expected):
        return f"your shape has {len(answer)} axes; the answer has another number of axes"
    if answer == expected:
        return None
    if sorted(answer) == sorted(expected):
        return "not right yet: the right sizes, in another order (transposed?)"
    off = [i for i, (a, e) in enumerate(zip(answer, expected)) if a != e]
    if len(off) == 1 and abs(answer[off[0]] - expected[off[0]]) == 1:
        return f"not right yet: axis {off[0]} is off by one"
    return "not right yet"


def _list_problem(answer: Any, expected: list | tuple, rtol: float, atol: float,
                  entries: str) -> str | None:
    if not isinstance(answer, (list, tuple)):
        return f"the answer is a list; yours is {_kind(answer)}"
    if len(answer) != len(expected):
        return f"your list has {len(answer)} items; the answer has another number of items"
    for i, (a, e) in enumerate(zip(answer, expected), 1):
        problem = _problem(a, e, rtol, atol)
        if problem is not None:
            return f"item {i} of {len(expected)}{f' ({entries})' if entries else ''}: {problem}"
    return None


Mistakes = Mapping[str, Any]


def _own_mistake(answer: Any, mistakes: Mistakes | None, rtol: float, atol: float) -> str | None:
    """The first of a check's own mistake patterns that ``answer`` matches: a pattern is a
    wrong value that a typical slip gives, or a function that says True for such an answer."""
    for message, pattern in (mistakes or {}).items():
        try:
            hit = (bool(pattern(answer)) if callable(pattern) and not isinstance(pattern, Tensor)
                   else _problem(answer, pattern, rtol, atol) is None)
        except Exception:  # a pattern that does not apply to this kind of answer
            hit = False
        if hit:
            return message
    return None


# ---------------------------------------------------------------------------------------------
# the three checks


def check(name: str, answer: Any, expected: Any, *, nudge: str = "", hint: str = "",
          entries: str = "", mistakes: Mistakes | None = None, rtol: float = 1e-5,
          atol: float = 1e-8) -> None:
    """Print ``✓ name: right`` when ``answer`` matches ``expected``; otherwise raise
    :class:`NotRightYet` saying what is off, with the ``nudge`` (first tries) or the ``hint``
    (the method, from the second wrong try).  ``entries`` says what the entries of an array
    answer are ("losses at steps 1..30"); ``mistakes`` maps a message to a wrong value (or a
    test) that a common slip gives.  ``expected`` is never shown."""
    _record(name, expected)
    if _record_only:
        return
    problem = _problem(answer, expected, rtol, atol, entries)
    if problem is not None:
        own = None if problem == _NOT_ANSWERED else _own_mistake(answer, mistakes, rtol, atol)
        raise _fail(name, f"not right yet: {own}" if own else problem, nudge, hint)
    _passed(name)


def _describe(args: tuple) -> str:
    """The inputs of a case, short: the student can see them in the check cell anyway."""
    parts = []
    for a in args:
        if isinstance(a, Tensor):
            parts.append(f"a Tensor of shape {tuple(a.shape)}")
        elif isinstance(a, np.ndarray):
            parts.append(f"an array of shape {a.shape}")
        elif callable(a):
            parts.append(getattr(a, "__name__", type(a).__name__))
        else:
            text = repr(a)
            parts.append(text if len(text) <= 30 else text[:27] + "...")
    return ", ".join(parts)


def _for_case(mistakes: Mistakes | None, args: tuple) -> dict[str, Any]:
    """check_function's mistake patterns for one case: a pattern that is a function is a
    *wrong reference*, called with the case's arguments to give the wrong result."""
    out = {}
    for message, pattern in (mistakes or {}).items():
        try:
            out[message] = pattern(*args) if callable(pattern) else pattern
        except Exception:  # noqa: BLE001 (a pattern that does not apply to this case)
            continue
    return out


def check_function(name: str, fn: Any, reference: Callable[..., Any], cases: Sequence[Any], *,
                   nudge: str = "", hint: str = "", entries: str = "",
                   mistakes: Mistakes | None = None, rtol: float = 1e-5,
                   atol: float = 1e-8) -> None:
    """Call the student's ``fn`` and ``reference`` on every case (a tuple of arguments, or one
    argument) and compare the results as :func:`check` does.  The first case that differs is
    named by its inputs; the reference's result is never shown.  A mistake pattern here is a
    wrong result, or a *wrong reference*: a function of the case's arguments that gives what a
    typical slip gives."""
    cases = [case if isinstance(case, tuple) else (case,) for case in cases]
    if _recording():
        _record(name, [reference(*args) for args in cases])
    if _record_only:
        return
    if _unanswered(fn):
        raise _fail(name, _NOT_ANSWERED, nudge, hint)
    if not callable(fn):
        raise _fail(name, f"this should be a function; yours is {_kind(fn)}", nudge, hint)
    for k, args in enumerate(cases, 1):
        expected = reference(*args)  # first: the student's function may change its inputs
        try:
            answer = fn(*args)
        except NotImplementedError:
            raise _fail(name, _NOT_WRITTEN, nudge, hint) from None
        except Exception as err:  # the student's bug, reported as a failed check
            raise _fail(name, f"case {k} of {len(cases)} ({_describe(args)}): your function "
                              f"raised {type(err).__name__}: {err}", nudge, hint) from None
        problem = _problem(answer, expected, rtol, atol, entries)
        if problem is not None:
            own = _own_mistake(answer, _for_case(mistakes, args), rtol, atol)
            problem = f"not right yet: {own}" if own else problem
            raise _fail(name, f"case {k} of {len(cases)} ({_describe(args)}): {problem}",
                        nudge, hint)
    _passed(name)


def check_grad(name: str, answer: Any, fn: Callable[..., Tensor], *inputs: Any,
               nudge: str = "", hint: str = "", mistakes: Mistakes | None = None,
               rtol: float = 1e-5, atol: float = 1e-8) -> None:
    """Compare ``answer`` with the gradient Lucid computes for ``fn`` at ``inputs``.

    ``fn`` takes one Tensor per input and returns a Tensor (summed first if it is not a
    scalar); the inputs (numbers, lists, arrays or Tensors) become float64 leaves.  ``answer``
    is the gradient for a single input, or one gradient per input, or a function that returns
    them when called with the same inputs."""
    leaves = [Tensor(_array(x).astype(np.float64), dtype=Float64, requires_grad=True)
              for x in inputs]
    out = fn(*leaves)
    grads = grad(out if out.size == 1 else out.sum(), leaves, allow_unused=True)
    expected = [np.zeros(x.shape) if g is None else g.numpy() for x, g in zip(leaves, grads)]
    _record(name, expected[0] if len(expected) == 1 else expected)
    if _record_only:
        return
    if callable(answer) and not isinstance(answer, Tensor):
        try:
            answer = answer(*inputs)
        except NotImplementedError:
            raise _fail(name, _NOT_WRITTEN, nudge, hint) from None
        except Exception as err:  # the student's bug, reported as a failed check
            raise _fail(name, f"your function raised {type(err).__name__}: {err}", nudge,
                        hint) from None
    if _unanswered(answer) and not (len(leaves) > 1 and isinstance(answer, (tuple, list))):
        raise _fail(name, _NOT_ANSWERED, nudge, hint)
    answers = [answer] if len(leaves) == 1 else answer
    if len(leaves) > 1 and (not isinstance(answers, (tuple, list))
                            or len(answers) != len(leaves)
                            or (all(_is_number(a) for a in answers)
                                and any(x.size > 1 for x in leaves))):
        raise _fail(name, f"give one gradient per input ({len(leaves)} of them), each shaped "
                          f"like its input; yours is {_kind(answer)}", nudge, hint)
    for i, (a, e) in enumerate(zip(answers, expected), 1):
        problem = _problem(a, e, rtol, atol)
        if problem is not None:
            own = None if problem == _NOT_ANSWERED else _own_mistake(a, mistakes, rtol, atol)
            problem = f"not right yet: {own}" if own else problem
            where = f"the gradient for input {i} of {len(leaves)}: " if len(leaves) > 1 else ""
            raise _fail(name, where + problem, nudge, hint)
    _passed(name)


# ---------------------------------------------------------------------------------------------
# a check cell in a scope of its own: the student edition and the grader


def pack(code: str) -> str:
    """A check's code as the student edition stores it: compressed, so that the expected value
    it computes is not in plain sight (:func:`run_check` unpacks it)."""
    return base64.b64encode(zlib.compress(code.encode("utf-8"), 9)).decode("ascii")


def _unpack(packed: str) -> str:
    return zlib.decompress(base64.b64decode(packed)).decode("utf-8")


def _caller_namespace() -> dict:
    """The namespace of the notebook (the caller's globals)."""
    return sys._getframe(2).f_globals


def _exec_scoped(code: str, namespace: dict, extra: dict | None = None) -> None:
    """Run ``code`` in a copy of ``namespace``: it reads the notebook's variables, and whatever
    it assigns (``x_check``...) is dropped with the copy afterwards."""
    scope = dict(namespace)
    scope.update(extra or {})
    try:
        exec(compile(code, "<check>", "exec"), scope)
    finally:
        scope.clear()  # the traceback of a failed check must not keep its variables alive


def run_check(name: str, packed: str) -> None:
    """Run the packed check of exercise ``name`` (see :func:`pack`) in a scope of its own.  A
    failed check raises a fresh :class:`NotRightYet`, with no traceback that leads back to
    the check's variables."""
    global _record_only
    failure, namespace = None, _caller_namespace()
    if _recording():  # once to record every part's expected value, the first failure aside
        _record_only = True
        try:
            _exec_scoped(_unpack(packed), namespace)
        except Exception:  # noqa: BLE001 (the real run below reports it)
            pass
        finally:
            _record_only = False
    try:
        _exec_scoped(_unpack(packed), namespace)
    except NotRightYet as err:
        failure = (err.name, err.problem, err.hint)
    if failure is not None:
        raise NotRightYet(*failure)


def grade_check(name: str, packed: str, token: str) -> None:
    """Grade one exercise (``course.py grade`` calls this in a fresh copy of this module, so a
    notebook that rebinds ``check`` or changes this module cannot fake a pass): run the
    teacher's packed check in a scope of its own, with this module's checks, and print one
    line, ``token`` followed by the result as JSON."""
    checks = {"check": check, "check_function": check_function, "check_grad": check_grad}
    result: dict[str, Any] = {"name": name}
    try:
        _exec_scoped(_unpack(packed), _caller_namespace(), checks)
        result["right"] = True
    except NotRightYet as err:
        result.update(right=False, problem=err.problem)
    except BaseException as err:  # noqa: BLE001 (the student's state broke the check: no point)
        result.update(right=False, problem=f"the check raised {type(err).__name__}: {err}")
    print(token, json.dumps(result), flush=True)
