"""Character-level text: the shipped Shakespeare text and a dataset of character windows.

    text = tiny_shakespeare()                   # ~300,000 characters, no download
    ds = CharDataset(text, block_size=64)
    x, y = ds[0]                                # Int64 Tensors (64,): y is x shifted by one
    ds.decode(ds.encode("ROMEO:"))              # 'ROMEO:'
    loader = DataLoader(ds, batch_size=32, shuffle=True)     # (32, 64), (32, 64)
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from importlib import resources

import numpy as np

from lucid.data.dataset import Dataset, _check_index, _index_array
from lucid.tensor import Tensor

__all__ = ["tiny_shakespeare", "CharDataset"]


def tiny_shakespeare() -> str:
    """The first 299,868 characters of "tiny shakespeare": speeches from Shakespeare's plays.

    The text Andrej Karpathy assembled for char-rnn, cut at a speech break; the plays are in
    the public domain.  It ships with Lucid (``lucid/data/datasets/files/``, with its credit
    in the README there), so a character-level model trains without a download.
    """
    path = resources.files("lucid.data.datasets").joinpath("files", "tiny_shakespeare.txt")
    return path.read_text(encoding="utf-8")


class CharDataset(Dataset):
    """``CharDataset(text, block_size)``: every window of ``block_size + 1`` characters.

    * The vocabulary is the sorted set of characters in ``text``: ``stoi`` maps a character
      to its id, ``itos`` back; ``vocab_size`` is their number.
    * Sample ``i`` is ``(x, y)``, two Int64 Tensors of length ``block_size``:
      ``x = ids[i : i + block_size]`` and ``y = ids[i + 1 : i + block_size + 1]``, so
      ``y[t]`` is the character that follows ``x[:t + 1]`` -- what a language model
      predicts at position ``t``.  There are ``len(text) - block_size`` samples.
    * ``encode(str)`` gives the ids (an Int64 Tensor), ``decode(ids)`` the string.
    """

    def __init__(self, text: str, block_size: int) -> None:
        if not isinstance(text, str):
            raise TypeError(f"CharDataset: text must be a str, got {type(text).__name__}")
        if isinstance(block_size, bool) or not isinstance(block_size, numbers.Integral) or (
                block_size < 1):
            raise ValueError(f"CharDataset: block_size must be an int >= 1, got {block_size!r}")
        if len(text) <= block_size:
            raise ValueError(f"CharDataset: the text has {len(text)} characters; it needs more "
                             f"than block_size = {block_size} to make one sample")
        # each character's code point; np.unique sorts them, as sorted(set(text)) would
        codes = np.frombuffer(text.encode("utf-32-le"), dtype="<u4")
        self._codes, ids = np.unique(codes, return_inverse=True)
        self.itos: list[str] = [chr(c) for c in self._codes]
        self.stoi: dict[str, int] = {ch: i for i, ch in enumerate(self.itos)}
        self.vocab_size = len(self.itos)
        self.block_size = int(block_size)
        self.ids = ids.astype(np.int64).reshape(-1)
        self._window = np.arange(self.block_size + 1)

    def __len__(self) -> int:
        return self.ids.shape[0] - self.block_size

    def __getitem__(self, index: int) -> tuple[Tensor, Tensor]:
        i = _check_index(index, len(self), "CharDataset")
        chunk = self.ids[i:i + self.block_size + 1]
        return Tensor(chunk[:-1]), Tensor(chunk[1:])

    def gather(self, indices: Sequence[int] | np.ndarray) -> tuple[Tensor, Tensor]:
        """A batch of windows in one indexing step: ``(B, block_size)`` each."""
        idx = _index_array(indices, len(self), "CharDataset.gather")
        chunks = self.ids[idx[:, None] + self._window]
        return Tensor(chunks[:, :-1]), Tensor(chunks[:, 1:])

    def encode(self, text: str) -> Tensor:
        """The ids of ``text``'s characters, an Int64 Tensor; each must be in the vocabulary."""
        if not isinstance(text, str):
            raise TypeError(f"CharDataset.encode: expected a str, got {type(text).__name__}")
        unknown = [ch for ch in dict.fromkeys(text) if ch not in self.stoi]
        if unknown:
            shown = ", ".join(f"{ch!r} (U+{ord(ch):04X})" for ch in unknown[:5])
            raise ValueError(f"CharDataset.encode: {shown} not in the vocabulary of "
                             f"{self.vocab_size} characters this dataset was built from")
        return Tensor(np.array([self.stoi[ch] for ch in text], dtype=np.int64))

    def decode(self, ids: Tensor | np.ndarray | Sequence[int]) -> str:
        """The string the ids stand for (a Tensor, array or list of ints, one dimension)."""
        arr = ids.numpy() if isinstance(ids, Tensor) else np.asarray(ids)
        if arr.ndim > 1 or not (arr.size == 0 or np.issubdtype(arr.dtype, np.integer)):
            raise ValueError(f"CharDataset.decode: expected one dimension of integer ids, got "
                             f"{arr.dtype} of shape {arr.shape}")
        arr = arr.reshape(-1)
        bad = arr[(arr < 0) | (arr >= self.vocab_size)]
        if bad.size:
            raise ValueError(f"CharDataset.decode: id {int(bad[0])} is outside the vocabulary "
                             f"(ids 0..{self.vocab_size - 1})")
        return "".join(self.itos[i] for i in arr.tolist())

    def __repr__(self) -> str:
        return (f"CharDataset({len(self.ids)} characters, vocab_size={self.vocab_size}, "
                f"block_size={self.block_size}, {len(self)} samples)")
