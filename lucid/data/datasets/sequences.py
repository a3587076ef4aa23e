"""Synthetic sequence tasks for the classroom: copy, reverse, sort, add two numbers.

Each task is a dataset of token sequences, ready for an embedding followed by an RNN or a
Transformer, and small enough to train in a notebook.  All four share one layout, the one a
language model reads (predict the next token)::

    prompt                         answer
    a_1 a_2 ... a_P-1  <sep>       b_1 b_2 ... b_A           (the full sequence s)

    x = s[:-1]                     the input, length P + A - 1
    y = s[1:], with the first P - 1 positions set to -100

so at the position of ``<sep>`` the model must produce ``b_1``, and from there on each next
answer token.  ``-100`` is the ``ignore_index`` of ``F.cross_entropy``: the loss counts the
answer only (the prompt is random, there is nothing to learn in it)::

    task = ReverseTask(1000, length=8, vocab=10)
    x, y = task[0]                       # Int64 Tensors of length 2 * 8
    logits = model(x_batch)              # (B, T, task.vocab_size)
    loss = F.cross_entropy(logits.reshape(-1, task.vocab_size), y_batch.reshape(-1))

==============  ==================================  ==========================================
task            prompt                              answer
==============  ==================================  ==========================================
CopyTask        ``length`` symbols, then ``<sep>``  the same symbols
ReverseTask     ``length`` symbols, then ``<sep>``  them in reverse order
SortTask        ``length`` symbols, then ``<sep>``  them sorted, smallest first
AdditionTask    a ``+`` b ``=`` (``digits`` each)   a + b in ``digits + 1`` digits
==============  ==================================  ==========================================

Symbols are the tokens ``0 .. vocab-1`` and ``<sep>`` is ``vocab`` (so ``vocab_size`` is
``vocab + 1``); AdditionTask's tokens are the digits 0-9, ``+`` = 10 and ``=`` = 11.
``task.prompts`` (N, P) and ``task.answers`` (N, A) hold the two parts apart, for an
encoder-decoder model.  The symbols are drawn from :mod:`lucid.random`:
``lucid.random.seed(n)`` before building a task makes it the same every run.
"""

from __future__ import annotations

import numbers

import numpy as np

from lucid import random as lucid_random
from lucid.data.dataset import TensorDataset
from lucid.tensor import Tensor

__all__ = ["SequenceTask", "CopyTask", "ReverseTask", "SortTask", "AdditionTask"]

#: targets at prompt positions: the loss ignores them (``F.cross_entropy``'s default)
IGNORE_INDEX = -100


def _positive_int(who: str, name: str, value: object, low: int = 1) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{who}: {name} must be an int, got {value!r}")
    if value < low:
        raise ValueError(f"{who}: {name} must be >= {low}, got {value}")
    return int(value)


class SequenceTask(TensorDataset):
    """The shared layout: ``prompts`` (N, P) and ``answers`` (N, A) -> items ``(x, y)``.

    Samples are rows of two Int64 tensors (a :class:`TensorDataset`, so batches are gathered
    in one step and ``task.to("gpu")`` moves them): ``x = s[:-1]`` and ``y = s[1:]`` with the
    prompt part of ``y`` set to ``ignore_index`` (-100), where ``s`` is the prompt followed by
    the answer.  Subclasses say how prompts and answers are made.
    """

    ignore_index = IGNORE_INDEX

    def __init__(self, prompts: np.ndarray, answers: np.ndarray, vocab_size: int) -> None:
        seq = np.concatenate([prompts, answers], axis=1).astype(np.int64)
        x, y = seq[:, :-1], seq[:, 1:].copy()
        y[:, :prompts.shape[1] - 1] = IGNORE_INDEX
        super().__init__(Tensor(x), Tensor(y))
        self.prompts = Tensor(prompts.astype(np.int64))
        self.answers = Tensor(answers.astype(np.int64))
        self.vocab_size = int(vocab_size)
        self.prompt_length = prompts.shape[1]
        self.answer_length = answers.shape[1]

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({len(self)} sequences: prompt {self.prompt_length} + "
                f"answer {self.answer_length} tokens, vocab_size={self.vocab_size}; "
                f"device={self.device!r})")


class _SymbolTask(SequenceTask):
    """Prompt: ``length`` random symbols from ``0..vocab-1`` and ``<sep>`` (= ``vocab``)."""

    def __init__(self, n: int, length: int = 8, vocab: int = 10) -> None:
        who = type(self).__name__
        n = _positive_int(who, "n", n)
        length = _positive_int(who, "length", length)
        vocab = _positive_int(who, "vocab", vocab, low=2)
        symbols = lucid_random.randint(0, vocab, size=(n, length)).numpy()
        self.vocab, self.length, self.sep = vocab, length, vocab
        prompts = np.concatenate([symbols, np.full((n, 1), vocab)], axis=1)
        super().__init__(prompts, self._answer(symbols), vocab_size=vocab + 1)

    @staticmethod
    def _answer(symbols: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class CopyTask(_SymbolTask):
    """``CopyTask(n, length=8, vocab=10)``: repeat the ``length`` symbols after ``<sep>``.

    The model must hold the whole prompt in its state (an RNN) or attend back ``length + 1``
    positions (a Transformer).
    """

    @staticmethod
    def _answer(symbols: np.ndarray) -> np.ndarray:
        return symbols.copy()


class ReverseTask(_SymbolTask):
    """``ReverseTask(n, length=8, vocab=10)``: the ``length`` symbols in reverse order."""

    @staticmethod
    def _answer(symbols: np.ndarray) -> np.ndarray:
        return symbols[:, ::-1].copy()


class SortTask(_SymbolTask):
    """``SortTask(n, length=8, vocab=10)``: the ``length`` symbols sorted, smallest first
    (symbols may repeat)."""

    @staticmethod
    def _answer(symbols: np.ndarray) -> np.ndarray:
        return np.sort(symbols, axis=1)


class AdditionTask(SequenceTask):
    """``AdditionTask(n, digits=3, reverse_answer=False)``: ``a + b =`` and then the sum.

    ``a`` and ``b`` are drawn uniformly from ``0 .. 10**digits - 1`` and written with
    ``digits`` digits each, most significant first, zero-padded: ``0 4 2 + 1 9 9 =``.  The
    answer is ``a + b`` in ``digits + 1`` digits (``0 2 4 1``).  With ``reverse_answer=True``
    the answer is written least significant digit first (``1 4 2 0``), the order in which
    the carries are made, which a left-to-right model learns much faster.

    Tokens: the digits 0-9, ``plus`` = 10, ``equals`` = 11; ``vocab_size`` = 12.
    """

    plus, equals = 10, 11

    def __init__(self, n: int, digits: int = 3, reverse_answer: bool = False) -> None:
        who = type(self).__name__
        n = _positive_int(who, "n", n)
        digits = _positive_int(who, "digits", digits)
        if digits > 18:
            raise ValueError(f"{who}: digits must be <= 18 (the sum must fit in an int64), "
                             f"got {digits}")
        if not isinstance(reverse_answer, (bool, np.bool_)):
            raise TypeError(f"{who}: reverse_answer must be True or False, got "
                            f"{reverse_answer!r}")
        self.digits, self.reverse_answer = digits, bool(reverse_answer)
        ab = lucid_random.randint(0, 10 ** digits, size=(n, 2)).numpy()
        self.a, self.b = ab[:, 0].copy(), ab[:, 1].copy()
        prompts = np.concatenate([self._digits(self.a, digits), np.full((n, 1), self.plus),
                                  self._digits(self.b, digits), np.full((n, 1), self.equals)],
                                 axis=1)
        answers = self._digits(self.a + self.b, digits + 1)
        if self.reverse_answer:
            answers = answers[:, ::-1]
        super().__init__(prompts, answers, vocab_size=12)

    @staticmethod
    def _digits(values: np.ndarray, width: int) -> np.ndarray:
        """Each value as ``width`` decimal digits, most significant first: (N,) -> (N, width)."""
        powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
        return (values[:, None] // powers) % 10
