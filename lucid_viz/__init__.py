"""lucid_viz: the notebook layer of Lucid (DAG rendering, backward stepper, %lucid_flops).

It reads Lucid's graph (``Tensor._op`` / ``Tensor._prev``) and never changes it; importing
``lucid`` never imports this package.  The renderers arrive with issue 5.
"""

__all__: list[str] = []
