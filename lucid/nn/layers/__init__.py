"""The layer classes (``nn.Linear``, ``nn.Conv2d`` ...), one file per family."""

from lucid.nn.layers.activation import *
from lucid.nn.layers.attention import *
from lucid.nn.layers.conv import *
from lucid.nn.layers.dropout import *
from lucid.nn.layers.embedding import *
from lucid.nn.layers.linear import *
from lucid.nn.layers.loss import *
from lucid.nn.layers.norm import *
from lucid.nn.layers.pooling import *
from lucid.nn.layers.vision import *
from lucid.nn.layers.recurrent import *
from lucid.nn.layers.transformer import *
from lucid.nn.layers.padding import *
from lucid.nn.layers.distance import *
