"""lucid_viz: the notebook layer of Lucid (DAG rendering, backward stepper, %lucid_flops).

It reads Lucid's graph (``Tensor._op`` / ``Tensor._prev``) and never changes it; importing
``lucid`` never imports this package.  Data first, pictures second: :func:`trace` turns a graph
into plain data (:mod:`lucid_viz.graph`), and every renderer reads that.

* ``trace(y)`` / ``trace(model, x)`` -- the graph model;
* ``draw(y)`` / ``draw(model, x, depth=1)`` -- the DAG as SVG (:mod:`lucid_viz.render`):
  :mod:`lucid_viz.view` decides what is shown (clusters, collapsed modules, roll-ups, the
  time steps of a recurrent layer rolled up into one, "LSTM step × 32"),
  :mod:`lucid_viz.scene` what it says (labels, the cluster tree, the legend),
  :mod:`lucid_viz.dot` and :mod:`lucid_viz.mermaid` write that, :mod:`lucid_viz.fit` lays
  the picture out to fit the page, :mod:`lucid_viz.graphviz_bin` finds Graphviz;
* ``step_backward(loss)`` -- the backward pass, one node per step (:mod:`lucid_viz.stepper`);
* ``%load_ext lucid_viz`` -- ``%lucid_flops`` / ``%%lucid_flops`` (:mod:`lucid_viz.magic`);
* in IPython, errors of bad input show the user's line and Lucid's message without Lucid's own
  frames (:mod:`lucid_viz.tracebacks`; ``short_tracebacks(False)`` turns it off);
* ``plot_flops_per_layer``, ``plot_grad_norms`` + ``grad_norms``, ``plot_loss``,
  ``plot_attention`` -- matplotlib figures (:mod:`lucid_viz.plots`; matplotlib is imported on
  first use, not here).
"""

from lucid_viz.graph import Edge, Graph, Node, trace
from lucid_viz.graphviz_bin import GraphvizError, GraphvizNotFound, find_dot
from lucid_viz.render import Drawing, ModuleInfo, draw, to_dot, to_mermaid, trace_with_modules

_PLOTS = ("grad_norms", "plot_attention", "plot_flops_per_layer", "plot_grad_norms",
          "plot_loss")

__all__ = [
    "Drawing",
    "Edge",
    "Graph",
    "GraphvizError",
    "GraphvizNotFound",
    "ModuleInfo",
    "Node",
    "draw",
    "find_dot",
    "load_ipython_extension",
    "short_tracebacks",
    "step_backward",
    "to_dot",
    "trace",
    "trace_with_modules",
    *_PLOTS,
]


def __getattr__(name: str):
    # The plots need matplotlib; load it when a plot is asked for, so that `import lucid_viz`
    # (and `%load_ext lucid_viz`) stays light and works without it.
    if name in _PLOTS:
        from lucid_viz import plots

        return getattr(plots, name)
    raise AttributeError(f"module 'lucid_viz' has no attribute {name!r}")


# The backward stepper and the %lucid_flops magic (`%load_ext lucid_viz`); last, because they
# read the renderer above.
from lucid_viz.stepper import step_backward
from lucid_viz.magic import load_ipython_extension
# Self-checks for the course's exercises: right or wrong, with a hint, never the answer.
from lucid_viz import exercises
# In IPython, a wrong call shows the user's line and Lucid's message, not Lucid's frames.
from lucid_viz.tracebacks import short_tracebacks

short_tracebacks()
