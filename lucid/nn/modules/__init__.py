"""``lucid.nn.modules.<file>.<Layer>``: the paths PyTorch's layers live at
(``torch.nn.modules.linear.Linear``, ``torch.nn.modules.rnn.LSTM`` ...), for programs that
name a layer by its full path -- examples/word_language_model lists them for
``torch.serialization.safe_globals``, other programs use them in ``isinstance`` checks.

Each submodule here holds the same classes as ``lucid.nn`` (the very same objects), grouped
as PyTorch groups them; Lucid's own files are organised differently (``lucid/nn/layers``).
"""

from __future__ import annotations

import sys
import types

from lucid import nn

#: PyTorch's file -> the layers it holds (those Lucid has)
_FILES = {
    "module": ["Module"],
    "activation": ["ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "GELU", "SiLU", "Mish", "Tanh",
                   "Sigmoid", "Softmax", "LogSoftmax", "Softplus", "Hardswish",
                   "Hardsigmoid", "MultiheadAttention", "PReLU", "Threshold", "Hardtanh"],
    "container": ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"],
    "dropout": ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout"],
    "linear": ["Linear", "Identity", "Bilinear", "LazyLinear"],
    "normalization": ["LayerNorm", "GroupNorm", "LocalResponseNorm", "RMSNorm"],
    "batchnorm": ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"],
    "instancenorm": ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"],
    "sparse": ["Embedding", "EmbeddingBag"],
    "transformer": ["Transformer", "TransformerEncoder", "TransformerDecoder",
                    "TransformerEncoderLayer", "TransformerDecoderLayer"],
    "rnn": ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"],
    "conv": ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
             "ConvTranspose3d"],
    "pooling": ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
                "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d"],
    "flatten": ["Flatten", "Unflatten"],
    "pixelshuffle": ["PixelShuffle", "PixelUnshuffle"],
    "upsampling": ["Upsample"],
    "loss": ["L1Loss", "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss",
             "SmoothL1Loss", "HuberLoss", "KLDivLoss", "CosineEmbeddingLoss",
             "MarginRankingLoss", "TripletMarginLoss"],
}


def _submodule(file: str, names: list[str]) -> types.ModuleType:
    module = types.ModuleType(f"{__name__}.{file}",
                              f"PyTorch's torch.nn.modules.{file}: the same classes as lucid.nn")
    for name in names:
        if hasattr(nn, name):
            setattr(module, name, getattr(nn, name))
    return module


for _file, _names in _FILES.items():
    _module = _submodule(_file, _names)
    sys.modules[_module.__name__] = _module  # `import lucid.nn.modules.rnn` works too
    globals()[_file] = _module

# PyTorch's out_proj of MultiheadAttention is this subclass of Linear (a marker for
# quantisation); in Lucid it is Linear itself
linear.NonDynamicallyQuantizableLinear = nn.Linear  # type: ignore[name-defined]  # noqa: F821

__all__ = list(_FILES)
