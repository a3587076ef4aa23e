"""lucid.optim: optimizers (per-parameter update rules) and learning-rate schedules.

Each optimizer is a subclass of :class:`Optimizer` that defines ``update`` -- how *one*
parameter moves given its gradient, its state and its group's hyperparameters; the base class
walks the parameters.  A training step::

    opt = SGD(model.parameters(), defaults={"lr": 1e-2})   # or SGD(model.parameters(), lr=1e-2)
    opt.zero_grad()
    loss = criterion(model(x), y)
    loss.eval()
    loss.backward()
    opt.step()
"""

from lucid.optim.optimizer import Optimizer
from lucid.optim.sgd import SGD
from lucid.optim.adam import Adam, AdamW
from lucid.optim.rmsprop import RMSprop
from lucid.optim.adagrad import Adagrad
from lucid.optim.adadelta import Adadelta
from lucid.optim.adamax import Adamax
from lucid.optim.nadam import NAdam
from lucid.optim.radam import RAdam
from lucid.optim.lbfgs import LBFGS
from lucid.optim import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "NAdam", "RAdam", "Adamax", "RMSprop",
           "Adagrad", "Adadelta", "LBFGS", "lr_scheduler"]
