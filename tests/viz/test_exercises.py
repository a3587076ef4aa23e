"""lucid_viz.exercises: a check says right or wrong, with the hint, and never gives the expected
value away -- not in the message, not in the error."""

from __future__ import annotations

import importlib.util
import json
import math

import numpy as np
import pytest

import lucid
from lucid_viz import exercises
from lucid_viz.exercises import NotRightYet, check, check_function, check_grad

HAS_MLX = importlib.util.find_spec("mlx") is not None
needs_mlx = pytest.mark.skipif(not HAS_MLX, reason="MLX is not installed")
DEVICES = ["cpu", pytest.param("gpu", marks=needs_mlx)]
pytestmark = pytest.mark.filterwarnings("ignore:MLX has no GPU")

HINT = "differentiate term by term"
METHOD = "d/dx x² = 2x, then add the terms"


@pytest.fixture(autouse=True)
def _fresh_tries():
    """Every test starts with no wrong tries on record (the hints step up with them)."""
    exercises._misses.clear()
    yield
    exercises._misses.clear()


def _fails(call, *args, **kwargs) -> str:
    with pytest.raises(NotRightYet) as info:
        call(*args, **kwargs)
    return str(info.value)


# ---------------------------------------------------------------------------------------------
# check


def test_a_right_answer_is_confirmed(capsys):
    check("Exercise 1", 7.0, lucid.Tensor(7.0), nudge=HINT)
    assert capsys.readouterr().out == "✓ Exercise 1: right\n"


def test_an_unanswered_exercise_says_so_with_the_hint():
    text = _fails(check, "Exercise 1", ..., 7.4366, nudge=HINT)
    assert text == ("Exercise 1: not answered yet: replace the `...` with your answer\n"
                    f"Hint: {HINT}")


def test_a_wrong_number_is_not_right_and_the_answer_stays_hidden():
    expected = 2 + 2 * math.e
    text = _fails(check, "Exercise 1", 7.0, expected, nudge=HINT)
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
    text = _fails(check, "shape", [[1.0, 2.0, 3.0, 4.0]], np.zeros((2, 2)))
    assert "your answer has shape (1, 4); the answer has another shape" in text
    assert "(2, 2)" not in text
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
        check("Exercise 1", 7.0, 8.0, nudge=HINT)
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
                  CASES, nudge=HINT)
    assert text.startswith("tanh': case 1 of 3 (0.5, 1.0): not right yet")
    assert text.endswith(f"Hint: {HINT}")
    assert f"{_tanh_grad(0.5, 1.0):.3}" not in text


def test_check_function_on_a_stub_says_it_is_not_written_yet():
    def stub(z, g):
        """The student's version."""
        raise NotImplementedError("TODO: your code here")

    text = _fails(check_function, "tanh'", stub, _tanh_grad, CASES, nudge=HINT)
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
    text = _fails(check_grad, "dL/dw", [2.5, 3.0, 7.0], f, [1.0, 2.0, 3.0], nudge=HINT)
    assert text == f"dL/dw: 1 of 3 entries are not right yet, the first at index 2\nHint: {HINT}"
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


# ---------------------------------------------------------------------------------------------
# hints in steps


def test_the_nudge_comes_first_and_the_method_after_a_second_wrong_try():
    def hint_of(answer):
        with pytest.raises(NotRightYet) as info:
            check("Exercise 9", answer, 7.0, nudge=HINT, hint=METHOD)
        return info.value.hint

    assert hint_of(...) == HINT  # unanswered: the nudge, and it is not counted as a try
    assert hint_of(...) == HINT
    assert hint_of(5.0) == HINT  # first wrong try
    assert hint_of(6.0) == METHOD  # second wrong try: the method
    assert hint_of(...) == HINT


def test_without_a_nudge_a_check_says_where_to_look_and_keeps_the_method_back():
    with pytest.raises(NotRightYet) as info:
        check("Exercise 8", 5.0, 7.0, hint=METHOD)
    assert info.value.hint == exercises._NUDGE and METHOD not in str(info.value)


def test_tries_are_counted_per_exercise():
    for _ in range(2):
        with pytest.raises(NotRightYet):
            check("A", 5.0, 7.0, nudge=HINT, hint=METHOD)
    with pytest.raises(NotRightYet) as info:
        check("B", 5.0, 7.0, nudge=HINT, hint=METHOD)
    assert info.value.hint == HINT


# ---------------------------------------------------------------------------------------------
# common mistakes, named without the answer

MATRIX = np.array([[1.5, -2.0, 3.25], [0.5, 4.0, -1.75]])


@pytest.mark.parametrize("answer, kind", [
    (MATRIX[:, ::-1], "the right values, in another order"),
    (MATRIX.T, "transposed and the right values"),
    (-MATRIX, "the opposite sign"),
    (2 * MATRIX, "off by a constant factor: twice the answer"),
    (MATRIX / 2, "off by a constant factor: half the answer"),
    (MATRIX * 6, "off by a constant factor: 6 times the answer"),
    (MATRIX / 32, "off by a constant factor: the answer divided by 32"),
    (MATRIX + 1, "off by one"),
    (MATRIX ** 2, "the square of the answer (a square root missing?)"),
])
def test_a_common_mistake_is_named(answer, kind):
    text = _fails(check, "m", answer, MATRIX)
    assert kind in text
    for value in MATRIX.flat:
        assert f"{value}" not in text


def test_a_missing_square_root_and_an_integer_off_by_one():
    assert "the square of the answer" in _fails(check, "norm", 25.0, 5.0)
    assert "the square root of the answer (a square too few?)" in \
        _fails(check, "variance", 3.0, 9.0)
    assert "not right yet: off by one" in _fails(check, "count", 73_729, 73_728)
    assert "twice the answer" in _fails(check, "flops", 147_456, 73_728)
    assert "axis 1 is off by one" in _fails(check, "shape", (2, 4, 5), (2, 5, 5))
    assert "the right sizes, in another order" in _fails(check, "shape", (5, 2), (2, 5))


def test_an_unrelated_wrong_answer_names_no_mistake():
    text = _fails(check, "m", [[9.0, 1.0, 0.0], [2.0, 2.0, 2.0]], MATRIX)
    assert text == "m: 6 of 6 entries are not right yet, the first at index (0, 0)"


def test_entries_say_what_the_numbers_are():
    losses = np.linspace(2.0, 0.5, 30)
    text = _fails(check, "Exercise 12.2", losses[::-1].copy() * 0 + losses + 0.25, losses,
                  entries="losses at steps 1..30")
    assert text.startswith("Exercise 12.2: 30 of 30 entries (losses at steps 1..30) are not "
                           "right yet, the first at index 0")


def test_a_check_names_its_own_mistakes():
    own = {"that is the loss of the first step only": 2.0,
           "a sum where the mean belongs": lambda a: float(a) > 10}
    assert "not right yet: that is the loss of the first step only" in \
        _fails(check, "own", 2.0, 1.25, mistakes=own)
    assert "not right yet: a sum where the mean belongs" in \
        _fails(check, "own", 12.0, 1.25, mistakes=own)
    check("own", 1.25, 1.25, mistakes=own)
    text = _fails(check_function, "own f", lambda x: 2.0, lambda x: 1.25, [1.0], mistakes=own)
    assert text.startswith("own f: case 1 of 1 (1.0): not right yet: that is the loss of the")


# ---------------------------------------------------------------------------------------------
# a check in a scope of its own


def test_run_check_leaves_nothing_behind_and_keeps_the_expected_value_out_of_reach():
    code = ("x_check = lucid.Tensor(1.5, requires_grad=True)\n"
            "(x_check ** 3).backward()\n"
            "check('Exercise 2.1', dz_dx, x_check.grad, nudge='nudge')\n")
    packed = exercises.pack(code)
    assert "1.5" not in packed and "x_check" not in packed
    namespace = {"lucid": lucid, "check": check, "dz_dx": ..., "run_check": exercises.run_check}
    with pytest.raises(NotRightYet) as info:
        exec(f"run_check('Exercise 2.1', {packed!r})", namespace)
    assert str(info.value) == ("Exercise 2.1: not answered yet: replace the `...` with your "
                               "answer\nHint: nudge")
    assert info.value.__context__ is None and info.value.__cause__ is None
    assert set(namespace) == {"lucid", "check", "dz_dx", "run_check", "__builtins__"}
    frames, tb = [], info.tb
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in frames:  # nothing on the way holds the check's tensor (its .grad is 6.75)
        assert not any(isinstance(v, lucid.Tensor) for v in frame.f_locals.values())
        assert "x_check" not in frame.f_locals
    namespace["dz_dx"] = 6.75
    exec(f"run_check('Exercise 2.1', {packed!r})", namespace)
    assert "x_check" not in namespace


def test_grade_check_prints_a_result_line_with_its_token(capsys):
    packed = exercises.pack("check('Ex', answer, 3.0)\n")

    def fake_check(*args, **kwargs):  # a notebook that rebinds check cannot fake a pass
        print("✓ Ex: right")

    for answer, right in [(3.0, True), (4.0, False), (..., False)]:
        exec(f"grade_check('Ex', {packed!r}, 'tok123')",
             {"grade_check": exercises.grade_check, "answer": answer, "check": fake_check})
        line = capsys.readouterr().out.strip().split("\n")[-1]
        assert line.startswith("tok123 {")
        result = json.loads(line.split(" ", 1)[1])
        assert result["name"] == "Ex" and result["right"] is right
    exec(f"grade_check('Ex', {exercises.pack('1 / 0')!r}, 't')",
         {"grade_check": exercises.grade_check})
    result = json.loads(capsys.readouterr().out.split(" ", 1)[1])
    assert result == {"name": "Ex", "right": False,
                      "problem": "the check raised ZeroDivisionError: division by zero"}


def test_check_function_takes_wrong_references_as_mistakes():
    def rms(v):
        return v / np.sqrt((v ** 2).mean(axis=-1, keepdims=True))

    def mean_square(v):
        return v / (v ** 2).mean(axis=-1, keepdims=True)

    rows = np.array([[1.0, -2.0, 3.0], [0.5, 0.0, 2.0]])
    text = _fails(check_function, "rms", mean_square, rms, [rows],
                  mistakes={"the square root is missing": mean_square})
    assert text.startswith("rms: case 1 of 1 (an array of shape (2, 3)): not right yet: the "
                           "square root is missing")
    check_function("rms", rms, rms, [rows], mistakes={"the square root is missing": mean_square})
