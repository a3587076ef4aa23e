"""lucid_viz.exercises: a check says right or wrong, with the hint, and never gives the expected
value away -- not in the message, not in the error."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

import lucid
from lucid_viz.exercises import NotRightYet, check, check_function, check_grad

HAS_MLX = importlib.util.find_spec("mlx") is not None
needs_mlx = pytest.mark.skipif(not HAS_MLX, reason="MLX is not installed")
DEVICES = ["cpu", pytest.param("gpu", marks=needs_mlx)]
pytestmark = pytest.mark.filterwarnings("ignore:MLX has no GPU")

HINT = "differentiate term by term"


def _fails(call, *args, **kwargs) -> str:
    with pytest.raises(NotRightYet) as info:
        call(*args, **kwargs)
    return str(info.value)


# ---------------------------------------------------------------------------------------------
# check


def test_a_right_answer_is_confirmed(capsys):
    check("Exercise 1", 7.0, lucid.Tensor(7.0), hint=HINT)
    assert capsys.readouterr().out == "✓ Exercise 1: right\n"


def test_an_unanswered_exercise_says_so_with_the_hint():
    text = _fails(check, "Exercise 1", ..., 7.4366, hint=HINT)
    assert text == ("Exercise 1: not answered yet: replace the `...` with your answer\n"
                    f"Hint: {HINT}")


def test_a_wrong_number_is_not_right_and_the_answer_stays_hidden():
    expected = 2 + 2 * math.e
    text = _fails(check, "Exercise 1", 7.0, expected, hint=HINT)
    assert text == f"Exercise 1: not right yet\nHint: {HINT}"
    assert "7.4" not in text


def test_numbers_are_compared_to_a_tolerance():
    check("close", 7.43656, 2 + 2 * math.e, rtol=1e-5)
    with pytest.raises(NotRightYet):
        check("close", 7.43656, 2 + 2 * math.e, rtol=1e-7)


@pytest.mark.parametrize("device", DEVICES)
def test_tensors_lists_and_arrays_compare_by_value(device):
    expected = lucid.Tensor([2.5, 3.0, 8.0], device=device)
    check("list vs tensor", [2.5, 3.0, 8.0], expected)
    check("array vs tensor", np.array([2.5, 3.0, 8.0]), expected)
    check("tensor vs tensor", lucid.Tensor([2.5, 3.0, 8.0], device=device), expected)
    text = _fails(check, "wrong", [2.5, 3.5, 9.0], expected)
    assert "2 of 3 entries are not right yet" in text
    assert "8.0" not in text and "3.0" not in text


def test_a_wrong_shape_is_named_by_the_students_shape_only():
    text = _fails(check, "shape", [[1.0, 2.0, 3.0]], np.zeros((3, 1)))
    assert "your answer has shape (1, 3); the answer has another shape" in text
    assert "(3, 1)" not in text
    assert "one number" in _fails(check, "scalar", [1.0, 2.0], 3.0)
    check("one number in a list", [3.0], 3.0)


def test_nan_in_an_answer_is_named():
    assert "nan or inf" in _fails(check, "nan", [1.0, float("nan")], [1.0, 2.0])


def test_the_wrong_kind_of_value_is_named():
    assert "the answer is a number or an array of numbers; yours is str '7'" in \
        _fails(check, "kind", "7", 7.0)
    assert "the answer is True or False; yours is int 1" in _fails(check, "kind", 1, True)
    assert "yours is True" in _fails(check, "kind", True, 1.0)
    assert "the answer is a piece of text" in _fails(check, "kind", 3, "gpu")


def test_booleans_text_and_sets():
    check("bool", False, np.bool_(False))
    assert "not right yet" in _fails(check, "bool", True, False)
    check("device", "gpu", "gpu")
    assert "not right yet" in _fails(check, "device", "cpu", "gpu")
    check("set", ["LayerNorm", "GroupNorm"], {"GroupNorm", "LayerNorm"})
    text = _fails(check, "set", ["LayerNorm", "BatchNorm2d"], {"GroupNorm", "LayerNorm"})
    assert text.startswith("set: 1 of your items should not be there and 1 items are missing")
    assert "GroupNorm" not in text


def test_shapes_and_lists_of_names():
    check("shape", (3, 2, 4), (3, 2, 4))
    check("shape as a list", [3, 2, 4], (3, 2, 4))
    assert "your shape has 2 axes" in _fails(check, "shape", (3, 2), (3, 2, 4))
    assert "not right yet" in _fails(check, "shape", (2, 3, 4), (3, 2, 4))
    check("names", ["weight", "bias"], ["weight", "bias"])
    assert "item 2 of 2: not right yet" in _fails(check, "names", ["weight", "b"],
                                                  ["weight", "bias"])
    assert "your list has 1 items" in _fails(check, "names", ["weight"], ["weight", "bias"])


def test_dicts_compare_key_by_key_and_name_the_key():
    expected = {"parameters": ["weight"], "output": [2.0, 2.0], "calls": 2}
    check("dict", {"calls": 2.0, "output": lucid.Tensor([2.0, 2.0]), "parameters": ["weight"]},
          expected)
    assert "output: 1 of 2 entries are not right yet" in \
        _fails(check, "dict", {**expected, "output": [2.0, 3.0]}, expected)
    assert "'calls' is missing" in _fails(check, "dict", {"parameters": ["weight"],
                                                          "output": [2.0, 2.0]}, expected)
    assert "'extra' should not be there" in _fails(check, "dict", {**expected, "extra": 1},
                                                   expected)
    assert "the answer is a dict; yours is list" in _fails(check, "dict", [1], expected)


def test_dtypes_compare_with_equality():
    check("dtype", lucid.Float16, lucid.Float16)
    assert "not right yet" in _fails(check, "dtype", lucid.Float32, lucid.Float16)
    assert "the answer is a Numeric; yours is str 'Float16'" in \
        _fails(check, "dtype", "Float16", lucid.Float16)


def test_none_suggests_a_missing_return():
    assert "does a function forget to `return`?" in _fails(check, "none", None, 1.0)


def test_ipython_shows_two_short_lines_instead_of_a_traceback():
    with pytest.raises(NotRightYet) as info:
        check("Exercise 1", 7.0, 8.0, hint=HINT)
    lines = info.value._render_traceback_()
    assert len(lines) == 2
    assert "✗ Exercise 1" in lines[0] and "not right yet" in lines[0]
    assert lines[1].endswith(HINT)
    assert not any("8" in line for line in lines)


# ---------------------------------------------------------------------------------------------
# check_function


def _tanh_grad(z: float, g: float) -> float:
    x = lucid.Tensor(z, requires_grad=True)
    lucid.tanh(x).backward(lucid.Tensor(g))
    return float(x.grad)


CASES = [(0.5, 1.0), (-2.0, 3.0), (0.0, -1.5)]


def test_check_function_passes_a_right_function(capsys):
    check_function("tanh'", lambda z, g: g * (1 - math.tanh(z) ** 2), _tanh_grad, CASES)
    assert capsys.readouterr().out == "✓ tanh': right\n"


def test_check_function_names_the_first_failing_case_but_not_its_result():
    text = _fails(check_function, "tanh'", lambda z, g: g * (1 - math.tanh(z)), _tanh_grad,
                  CASES, hint=HINT)
    assert text.startswith("tanh': case 1 of 3 (0.5, 1.0): not right yet")
    assert text.endswith(f"Hint: {HINT}")
    assert f"{_tanh_grad(0.5, 1.0):.3}" not in text


def test_check_function_on_a_stub_says_it_is_not_written_yet():
    def stub(z, g):
        """The student's version."""
        raise NotImplementedError("TODO: your code here")

    text = _fails(check_function, "tanh'", stub, _tanh_grad, CASES, hint=HINT)
    assert text == ("tanh': not written yet: replace the `raise NotImplementedError(...)` line "
                    f"with your code\nHint: {HINT}")
    assert "not answered yet" in _fails(check_function, "tanh'", ..., _tanh_grad, CASES)
    assert "this should be a function; yours is float 1.0" in \
        _fails(check_function, "tanh'", 1.0, _tanh_grad, CASES)


def test_check_function_reports_the_students_own_error():
    text = _fails(check_function, "tanh'", lambda z, g: z / 0, _tanh_grad, CASES)
    assert "case 1 of 3 (0.5, 1.0): your function raised ZeroDivisionError: float division" \
        in text


def test_check_function_describes_tensor_arguments_by_shape():
    ref = lucid.relu
    check_function("relu", lambda x: x * (x > 0), ref, [lucid.Tensor([-1.0, 2.0])])
    text = _fails(check_function, "relu", lambda x: x, ref, [lucid.Tensor([[-1.0, 2.0]])])
    assert "case 1 of 1 (a Tensor of shape (1, 2)): 1 of 2 entries are not right yet" in text


# ---------------------------------------------------------------------------------------------
# check_grad


def test_check_grad_compares_with_lucids_gradient(capsys):
    v = np.array([0.5, -1.0, 2.0])

    def f(w):
        return (w * lucid.Tensor(v) + w ** 2).sum()

    check_grad("dL/dw", [2.5, 3.0, 8.0], f, [1.0, 2.0, 3.0])
    assert capsys.readouterr().out == "✓ dL/dw: right\n"
    text = _fails(check_grad, "dL/dw", [2.5, 3.0, 7.0], f, [1.0, 2.0, 3.0], hint=HINT)
    assert text == f"dL/dw: 1 of 3 entries are not right yet\nHint: {HINT}"
    assert "not answered yet" in _fails(check_grad, "dL/dw", ..., f, [1.0, 2.0, 3.0])


def test_check_grad_sums_a_non_scalar_output_and_takes_one_gradient_per_input():
    def f(a, b):
        return a * b  # summed: d/da = b, d/db = a

    check_grad("two inputs", ([3.0, 4.0], [1.0, 2.0]), f, [1.0, 2.0], [3.0, 4.0])
    text = _fails(check_grad, "two inputs", ([3.0, 4.0], [1.0, 5.0]), f, [1.0, 2.0], [3.0, 4.0])
    assert text.startswith("two inputs: the gradient for input 2 of 2: 1 of 2 entries")
    assert "give one gradient per input (2 of them)" in \
        _fails(check_grad, "two inputs", [3.0, 4.0], f, [1.0, 2.0], [3.0, 4.0])


def test_check_grad_calls_a_students_gradient_function():
    def f(x):
        return lucid.tanh(x)

    check_grad("tanh", lambda x: 1 - np.tanh(np.asarray(x)) ** 2, f, [0.3, -1.2])

    def stub(x):
        raise NotImplementedError

    assert "not written yet" in _fails(check_grad, "tanh", stub, f, [0.3, -1.2])


def test_check_grad_leaves_the_callers_tensors_alone():
    w = lucid.Tensor([1.0, 2.0], requires_grad=True)
    check_grad("w", [2.0, 4.0], lambda t: (t * t).sum(), w)
    assert w.grad is None


def test_a_pair_of_arrays_of_different_shapes_is_compared_item_by_item():
    a, b = np.ones((2, 3)), np.arange(4.0)
    check("pair", (a, b), (a.copy(), lucid.Tensor(b)))
    with pytest.raises(NotRightYet, match=r"pair: item 2 of 2: 1 of 4 entries are not right yet"):
        check("pair", (a, b + np.array([0, 0, 0, 1.0])), (a, b))
    with pytest.raises(NotRightYet, match=r"item 1 of 2: your answer has shape \(3, 2\)"):
        check("pair", (a.T, b), (a, b))


def test_check_grad_reports_a_students_exception_as_a_failed_check():
    def broken(x):
        raise RuntimeError("backward through a tensor with no graph")

    with pytest.raises(NotRightYet, match=r"g: your function raised RuntimeError: backward "
                                          r"through a tensor with no graph"):
        check_grad("g", broken, lambda x: x * x, [1.0, 2.0])
