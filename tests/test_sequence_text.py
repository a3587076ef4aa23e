"""lucid.data.datasets: the classroom sequence tasks (copy, reverse, sort, addition), the
shipped text and CharDataset -- layouts against NumPy, seeding, batching, errors."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.data import DataLoader
from lucid.data.datasets import (
    AdditionTask,
    CharDataset,
    CopyTask,
    ReverseTask,
    SortTask,
    tiny_shakespeare,
)

HAS_MLX = importlib.util.find_spec("mlx") is not None
DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.skipif(not HAS_MLX,
                                                              reason="MLX is not installed"))]

SYMBOL_TASKS = [(CopyTask, lambda s: s), (ReverseTask, lambda s: s[:, ::-1]),
                (SortTask, lambda s: np.sort(s, axis=1))]


# --------------------------------------------------------------------------------------------
# sequence tasks


@pytest.mark.parametrize("cls,answer", SYMBOL_TASKS)
def test_symbol_task_layout(cls, answer):
    lucid.random.seed(0)
    task = cls(50, length=6, vocab=7)
    assert len(task) == 50 and task.vocab_size == 8 and task.sep == 7
    assert (task.prompt_length, task.answer_length) == (7, 6)
    prompts, answers = task.prompts.numpy(), task.answers.numpy()
    symbols = prompts[:, :6]
    assert symbols.min() >= 0 and symbols.max() <= 6 and np.all(prompts[:, 6] == 7)
    np.testing.assert_array_equal(answers, answer(symbols))
    full = np.concatenate([prompts, answers], axis=1)              # s, length 13
    x, y = (t.numpy() for t in task.tensors)
    assert x.dtype == np.int64 and y.dtype == np.int64 and x.shape == y.shape == (50, 12)
    np.testing.assert_array_equal(x, full[:, :-1])
    np.testing.assert_array_equal(y[:, :6], -100)                  # the prompt is not scored
    np.testing.assert_array_equal(y[:, 6:], answers)               # at <sep>: the first answer
    xi, yi = task[3]
    np.testing.assert_array_equal(xi.numpy(), x[3])
    np.testing.assert_array_equal(yi.numpy(), y[3])


def test_addition_task_digits_add_up():
    lucid.random.seed(1)
    task = AdditionTask(40, digits=3)
    p, a = task.prompts.numpy(), task.answers.numpy()
    assert p.shape == (40, 8) and a.shape == (40, 4) and task.vocab_size == 12
    assert np.all(p[:, 3] == 10) and np.all(p[:, 7] == 11)        # "+" and "="
    number = lambda d: d @ (10 ** np.arange(d.shape[1] - 1, -1, -1))  # noqa: E731
    np.testing.assert_array_equal(number(p[:, :3]), task.a)
    np.testing.assert_array_equal(number(p[:, 4:7]), task.b)
    np.testing.assert_array_equal(number(a), task.a + task.b)
    assert task.a.max() < 1000 and task.b.min() >= 0
    x, y = (t.numpy() for t in task.tensors)
    np.testing.assert_array_equal(y[:, :7], -100)
    np.testing.assert_array_equal(y[:, 7:], a)
    lucid.random.seed(1)
    rev = AdditionTask(40, digits=3, reverse_answer=True)
    np.testing.assert_array_equal(rev.answers.numpy(), a[:, ::-1])  # same draws, reversed


def test_tasks_are_seeded_by_lucid_random():
    lucid.random.seed(7)
    a = ReverseTask(20, length=5)
    b = AdditionTask(20, digits=2)
    lucid.random.seed(7)
    np.testing.assert_array_equal(ReverseTask(20, length=5).prompts.numpy(), a.prompts.numpy())
    np.testing.assert_array_equal(AdditionTask(20, digits=2).prompts.numpy(), b.prompts.numpy())
    lucid.random.seed(8)
    assert not np.array_equal(ReverseTask(20, length=5).prompts.numpy(), a.prompts.numpy())


def test_cross_entropy_scores_only_the_answer():
    lucid.random.seed(2)
    task = SortTask(4, length=5, vocab=4)
    x, y = task.tensors
    yn = y.numpy()
    # logits sure of the right token at answer positions, sure of a wrong one at the prompt
    logits = np.full((4, 10, task.vocab_size), -30.0)
    rows, cols = np.nonzero(yn != -100)
    logits[rows, cols, yn[rows, cols]] = 30.0
    logits[yn == -100, 0] = 30.0
    loss = F.cross_entropy(lucid.Tensor(logits.reshape(-1, task.vocab_size)), y.reshape(-1))
    assert loss.item() < 1e-20
    logits[rows, cols, yn[rows, cols]] = -30.0            # now sure of a wrong answer token
    logits[rows, cols, (yn[rows, cols] + 1) % task.vocab_size] = 30.0
    loss = F.cross_entropy(lucid.Tensor(logits.reshape(-1, task.vocab_size)), y.reshape(-1))
    assert loss.item() == pytest.approx(60.0 + np.log1p(4 * np.exp(-60.0)), rel=1e-9)


@pytest.mark.parametrize("device", DEVICES)
def test_tasks_batch_through_a_dataloader(device):
    lucid.random.seed(3)
    task = CopyTask(10, length=4, vocab=5).to(device)
    xb, yb = next(iter(DataLoader(task, batch_size=4, shuffle=True)))
    assert xb.shape == yb.shape == (4, 8) and xb.device == device
    assert xb.dtype == lucid.Int64
    # each row is a copy: the answer in y repeats the prompt in x
    np.testing.assert_array_equal(yb.numpy()[:, 4:], xb.numpy()[:, :4])


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: CopyTask(0), ValueError, "CopyTask: n must be >= 1, got 0"),
    (lambda: ReverseTask(5, length=True), TypeError,
     "ReverseTask: length must be an int, got True"),
    (lambda: SortTask(5, vocab=1), ValueError, "SortTask: vocab must be >= 2, got 1"),
    (lambda: CopyTask(5, length=2.0), TypeError, "CopyTask: length must be an int, got 2.0"),
    (lambda: AdditionTask(5, digits=19), ValueError,
     "AdditionTask: digits must be <= 18 (the sum must fit in an int64), got 19"),
    (lambda: AdditionTask(5, reverse_answer="yes"), TypeError,
     "AdditionTask: reverse_answer must be True or False, got 'yes'"),
])
def test_task_errors(call, exc, msg):
    with pytest.raises(exc, match=re.escape(msg)):
        call()


# --------------------------------------------------------------------------------------------
# the shipped text and CharDataset


def test_tiny_shakespeare_ships_with_the_package():
    text = tiny_shakespeare()
    assert len(text) == 299_868 and text.startswith("First Citizen:\n")
    path = Path(lucid.__file__).parent / "data" / "datasets" / "files" / "tiny_shakespeare.txt"
    assert text == path.read_text(encoding="utf-8")
    # a wheel carries it: pyproject declares the folder's files as package data
    pyproject = (Path(lucid.__file__).parent.parent / "pyproject.toml").read_text()
    assert '"lucid.data.datasets" = ["files/*.txt", "files/README.md"]' in pyproject


def test_char_dataset_vocabulary_windows_and_round_trip():
    text = "hello, wörld! 🙂 hello"
    ds = CharDataset(text, block_size=4)
    assert ds.itos == sorted(set(text)) and ds.vocab_size == len(set(text))
    assert all(ds.stoi[ch] == i for i, ch in enumerate(ds.itos))
    assert len(ds) == len(text) - 4
    ids = np.array([ds.stoi[ch] for ch in text])
    for i in (0, 7, len(ds) - 1, -1):
        x, y = ds[i]
        j = i % len(ds)
        assert x.dtype == lucid.Int64 and x.shape == (4,)
        np.testing.assert_array_equal(x.numpy(), ids[j:j + 4])
        np.testing.assert_array_equal(y.numpy(), ids[j + 1:j + 5])
    assert ds.decode(ds.encode("wörld 🙂")) == "wörld 🙂"
    assert ds.decode([0, 1]) == ds.itos[0] + ds.itos[1]
    assert ds.decode(np.array([], dtype=np.int64)) == ""


def test_char_dataset_gather_equals_items_and_batches():
    ds = CharDataset(tiny_shakespeare()[:5000], block_size=16)
    idx = [3, 0, 4983, 17]
    xb, yb = ds.gather(idx)
    np.testing.assert_array_equal(xb.numpy(), np.stack([ds[i][0].numpy() for i in idx]))
    np.testing.assert_array_equal(yb.numpy(), np.stack([ds[i][1].numpy() for i in idx]))
    lucid.random.seed(0)
    xb, yb = next(iter(DataLoader(ds, batch_size=8, shuffle=True)))
    assert xb.shape == yb.shape == (8, 16) and xb.dtype == lucid.Int64
    np.testing.assert_array_equal(xb.numpy()[:, 1:], yb.numpy()[:, :-1])


def test_char_dataset_errors():
    with pytest.raises(TypeError, match="CharDataset: text must be a str, got bytes"):
        CharDataset(b"abc", 2)
    with pytest.raises(ValueError, match="CharDataset: block_size must be an int >= 1, got 0"):
        CharDataset("abc", 0)
    with pytest.raises(ValueError, match=re.escape(
            "CharDataset: the text has 3 characters; it needs more than block_size = 3")):
        CharDataset("abc", 3)
    ds = CharDataset("abcabc", 2)
    with pytest.raises(ValueError, match=re.escape(
            "CharDataset.encode: 'z' (U+007A), 'é' (U+00E9) not in the vocabulary of 3")):
        ds.encode("azéz")
    with pytest.raises(ValueError, match=re.escape(
            "CharDataset.decode: id 3 is outside the vocabulary (ids 0..2)")):
        ds.decode([0, 3])
    with pytest.raises(ValueError, match="expected one dimension of integer ids"):
        ds.decode(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(IndexError, match="CharDataset: index 4 is out of range for a dataset "
                                         "of 4 samples"):
        ds[4]
