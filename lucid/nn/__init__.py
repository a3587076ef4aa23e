"""lucid.nn: modules, parameters and buffers, layers, losses, functional ops and init."""

from lucid.nn.parameter import Buffer, Parameter
from lucid.nn.module import IncompatibleKeys, Module
from lucid.nn.containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from lucid.nn.layers import *
from lucid.nn import functional, init, utils
from lucid.nn import parallel  # DistributedDataParallel (imports lucid.distributed)
from lucid.nn import modules  # PyTorch's paths: lucid.nn.modules.linear.Linear, ...
