"""lucid.nn.functional: the layers' operations as plain functions (``F.relu(x)``)."""

from lucid.nn.functional.activation import *
from lucid.nn.functional.attention import *
from lucid.nn.functional.conv import *
from lucid.nn.functional.distance import *
from lucid.nn.functional.dropout import *
from lucid.nn.functional.embedding import *
from lucid.nn.functional.linear import *
from lucid.nn.functional.loss import *
from lucid.nn.functional.norm import *
from lucid.nn.functional.pooling import *
from lucid.nn.functional.vision import *
