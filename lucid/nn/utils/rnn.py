"""``nn.utils.rnn.pad_sequence``: variable-length sequences as one padded batch.

Lucid's recurrent layers take a padded batch and, instead of PyTorch's packed sequences, an
optional ``lengths=`` (each sequence's true length): the state of a sequence stops changing
after its last step, so the final hidden state is the one at its own end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lucid.nn.layers.recurrent import PackedSequence
from lucid.ops import pad as _pad
from lucid.ops import stack
from lucid.tensor import Tensor

__all__ = ["pad_sequence", "PackedSequence", "pack_padded_sequence", "pad_packed_sequence",
           "pack_sequence"]


def pad_sequence(sequences: Sequence[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0) -> Tensor:
    """Stack tensors of shapes (L_i, *) into (L_max, B, *) -- or (B, L_max, *) with
    ``batch_first`` -- padding each at its end with ``padding_value`` (PyTorch's function)."""
    seqs = list(sequences)
    if not seqs:
        raise ValueError("pad_sequence: no sequences given")
    tail = seqs[0].shape[1:]
    for k, s in enumerate(seqs):
        if not isinstance(s, Tensor) or s.ndim < 1 or s.shape[1:] != tail:
            raise ValueError(f"pad_sequence: sequence {k} must be a Tensor (L, *{tail}); got "
                             f"{getattr(s, 'shape', type(s).__name__)}")
    longest = max(s.shape[0] for s in seqs)
    padded = [_pad(s, ((0, longest - s.shape[0]),) + ((0, 0),) * len(tail),
                   constant_values=padding_value) for s in seqs]
    return stack(padded, axis=0 if batch_first else 1)


def _lengths(fn: str, lengths: Any, batch: int) -> list[int]:
    values = lengths.tolist() if hasattr(lengths, "tolist") else list(lengths)
    if len(values) != batch or any(int(n) < 1 for n in values):
        raise ValueError(f"{fn}: lengths must be {batch} positive ints (one per sequence), got "
                         f"{values}")
    return [int(n) for n in values]


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """A padded batch (L, N, *) -- (N, L, *) with ``batch_first`` -- and each sequence's
    length, for a recurrent layer (PyTorch's function; see :class:`PackedSequence`)."""
    padded = input.swapaxes(0, 1) if batch_first else input
    lengths = _lengths("pack_padded_sequence", lengths, padded.shape[1])
    if enforce_sorted and any(a < b for a, b in zip(lengths, lengths[1:])):
        raise RuntimeError("pack_padded_sequence: `lengths` array must be sorted in decreasing "
                           "order when `enforce_sorted` is True; sort the batch, or pass "
                           "enforce_sorted=False")
    if max(lengths) > padded.shape[0]:
        raise ValueError(f"pack_padded_sequence: a length {max(lengths)} exceeds the "
                         f"{padded.shape[0]} steps of the batch")
    return PackedSequence(padded[:max(lengths)], lengths)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None
                        ) -> tuple[Tensor, Tensor]:
    """The padded batch of a :class:`PackedSequence` and its lengths (an Int64 tensor)."""
    padded, lengths = sequence.padded, sequence.lengths
    if padding_value != 0.0:
        steps = np.arange(padded.shape[0])[:, None] < lengths[None, :]  # (L, N) valid
        mask = Tensor(steps.reshape(steps.shape + (1,) * (padded.ndim - 2)),
                      device=padded.device)
        padded = padded * mask + padding_value * (1 - mask)
    if total_length is not None and total_length > padded.shape[0]:
        extra = ((0, total_length - padded.shape[0]),) + ((0, 0),) * (padded.ndim - 1)
        padded = _pad(padded, extra, constant_values=padding_value)
    return (padded.swapaxes(0, 1) if batch_first else padded), Tensor(lengths)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Sequences of shapes (L_i, *) packed: ``pad_sequence`` then ``pack_padded_sequence``."""
    seqs = list(sequences)
    return pack_padded_sequence(pad_sequence(seqs), [s.shape[0] for s in seqs],
                                enforce_sorted=enforce_sorted)
