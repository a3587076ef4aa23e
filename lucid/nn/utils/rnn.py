"""``nn.utils.rnn.pad_sequence``: variable-length sequences as one padded batch.

Lucid's recurrent layers take a padded batch and, instead of PyTorch's packed sequences, an
optional ``lengths=`` (each sequence's true length): the state of a sequence stops changing
after its last step, so the final hidden state is the one at its own end.
"""

from __future__ import annotations

from collections.abc import Sequence

from lucid.ops import pad as _pad
from lucid.ops import stack
from lucid.tensor import Tensor

__all__ = ["pad_sequence"]


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
