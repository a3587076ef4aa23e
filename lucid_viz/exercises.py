"""Self-checks for exercises: right or wrong, with a hint, and never the answer.

The course's exercises end with a cell that checks the student's work::

    from lucid_viz.exercises import check, check_function, check_grad

    check("Exercise 2.1", dz_dx, x.grad, hint="b = x² is used three times.")
    check_function("Exercise 3.2", tanh_backward, reference, cases=[(0.5, 1.0), (-2.0, 3.0)])
    check_grad("Exercise 2.4", my_grad, lambda w: (w * w).sum(), [1.0, -2.0])

A check that passes prints ``✓ <name>: right``.  One that does not raises :class:`NotRightYet`,
whose message says *what* is off (not answered yet, the wrong kind of value, the wrong shape,
how many entries differ, which case fails) followed by the hint.  The expected value itself is
never printed, not even in the error: the point is to find it.

Values are compared by kind: ``True``/``False`` exactly; text exactly; a set as a set (order
free); a dict key by key; a shape (a tuple of whole numbers) exactly; numbers, lists of
numbers, NumPy arrays and Lucid tensors as arrays, to ``rtol``/``atol`` (``numpy.isclose``);
other lists item by item; anything else (a dtype, a device name) with ``==``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lucid.autograd.functional import grad
from lucid.tensor import Tensor
from lucid.types import Float64

__all__ = ["NotRightYet", "check", "check_function", "check_grad"]

_NOT_ANSWERED = "not answered yet: replace the `...` with your answer"
_NOT_WRITTEN = "not written yet: replace the `raise NotImplementedError(...)` line with your code"


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


def _compare_arrays(answer: Any, expected: Any, rtol: float, atol: float) -> str | None:
    exp = _array(expected)
    if _is_bool(answer) or (isinstance(answer, (list, tuple)) and not _is_numeric(answer)) \
            or not _is_numeric(answer):
        return f"the answer is a number or an array of numbers; yours is {_kind(answer)}"
    got = _array(answer)
    if got.shape != exp.shape:
        if got.size == exp.size == 1:
            got, exp = got.reshape(()), exp.reshape(())
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
    if exp.size == 1:
        return "not right yet"
    return f"{int(bad.sum())} of {exp.size} entries are not right yet"


def _problem(answer: Any, expected: Any, rtol: float, atol: float) -> str | None:
    """What is wrong with ``answer`` (in words that do not give ``expected`` away), or None."""
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
    if isinstance(expected, (set, frozenset)):
        if not isinstance(answer, (set, frozenset, list, tuple)):
            return f"the answer is a collection (a set or a list); yours is {_kind(answer)}"
        got = set(answer)
        if got == set(expected):
            return None
        extra, missing = len(got - set(expected)), len(set(expected) - got)
        parts = ([f"{extra} of your items should not be there"] if extra else []) + \
                ([f"{missing} items are missing"] if missing else [])
        return " and ".join(parts)
    if _is_shape(expected):
        if not _is_shape(tuple(answer) if isinstance(answer, list) else answer):
            return f"the answer is a shape, a tuple of whole numbers; yours is {_kind(answer)}"
        if len(answer) != len(expected):
            return f"your shape has {len(answer)} axes; the answer has another number of axes"
        return None if tuple(answer) == expected else "not right yet"
    if _is_numeric(expected) and not _ragged(expected):
        return _compare_arrays(answer, expected, rtol, atol)
    if isinstance(expected, (list, tuple)):  # item by item (arrays of different shapes too)
        if not isinstance(answer, (list, tuple)):
            return f"the answer is a list; yours is {_kind(answer)}"
        if len(answer) != len(expected):
            return f"your list has {len(answer)} items; the answer has another number of items"
        for i, (a, e) in enumerate(zip(answer, expected), 1):
            problem = _problem(a, e, rtol, atol)
            if problem is not None:
                return f"item {i} of {len(expected)}: {problem}"
        return None
    if answer == expected:
        return None
    if type(answer) is not type(expected):
        return f"the answer is a {type(expected).__name__}; yours is {_kind(answer)}"
    return "not right yet"


# ---------------------------------------------------------------------------------------------
# the three checks


def check(name: str, answer: Any, expected: Any, *, hint: str = "", rtol: float = 1e-5,
          atol: float = 1e-8) -> None:
    """Print ``✓ name: right`` when ``answer`` matches ``expected``; otherwise raise
    :class:`NotRightYet` saying what is off, with ``hint``.  ``expected`` is never shown."""
    problem = _problem(answer, expected, rtol, atol)
    if problem is not None:
        raise NotRightYet(name, problem, hint)
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


def check_function(name: str, fn: Any, reference: Callable[..., Any], cases: Sequence[Any], *,
                   hint: str = "", rtol: float = 1e-5, atol: float = 1e-8) -> None:
    """Call the student's ``fn`` and ``reference`` on every case (a tuple of arguments, or one
    argument) and compare the results as :func:`check` does.  The first case that differs is
    named by its inputs; the reference's result is never shown."""
    if _unanswered(fn):
        raise NotRightYet(name, _NOT_ANSWERED, hint)
    if not callable(fn):
        raise NotRightYet(name, f"this should be a function; yours is {_kind(fn)}", hint)
    cases = list(cases)
    for k, case in enumerate(cases, 1):
        args = case if isinstance(case, tuple) else (case,)
        expected = reference(*args)  # first: the student's function may change its inputs
        try:
            answer = fn(*args)
        except NotImplementedError:
            raise NotRightYet(name, _NOT_WRITTEN, hint) from None
        except Exception as err:  # the student's bug, reported as a failed check
            raise NotRightYet(name, f"case {k} of {len(cases)} ({_describe(args)}): your "
                                    f"function raised {type(err).__name__}: {err}", hint) from None
        problem = _problem(answer, expected, rtol, atol)
        if problem is not None:
            raise NotRightYet(name, f"case {k} of {len(cases)} ({_describe(args)}): {problem}",
                              hint)
    _passed(name)


def check_grad(name: str, answer: Any, fn: Callable[..., Tensor], *inputs: Any,
               hint: str = "", rtol: float = 1e-5, atol: float = 1e-8) -> None:
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
    if callable(answer) and not isinstance(answer, Tensor):
        try:
            answer = answer(*inputs)
        except NotImplementedError:
            raise NotRightYet(name, _NOT_WRITTEN, hint) from None
        except Exception as err:  # the student's bug, reported as a failed check
            raise NotRightYet(name, f"your function raised {type(err).__name__}: {err}",
                              hint) from None
    if _unanswered(answer) and not (len(leaves) > 1 and isinstance(answer, (tuple, list))):
        raise NotRightYet(name, _NOT_ANSWERED, hint)
    answers = [answer] if len(leaves) == 1 else answer
    if len(leaves) > 1 and (not isinstance(answers, (tuple, list))
                            or len(answers) != len(leaves)
                            or (all(_is_number(a) for a in answers)
                                and any(x.size > 1 for x in leaves))):
        raise NotRightYet(name, f"give one gradient per input ({len(leaves)} of them), each "
                                f"shaped like its input; yours is {_kind(answer)}", hint)
    for i, (a, e) in enumerate(zip(answers, expected), 1):
        problem = _problem(a, e, rtol, atol)
        if problem is not None:
            where = f"the gradient for input {i} of {len(leaves)}: " if len(leaves) > 1 else ""
            raise NotRightYet(name, where + problem, hint)
    _passed(name)
