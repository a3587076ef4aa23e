"""The op spec table (STYLE #8): one row per op (or per op variant).

Each family file (``elementwise.py``, ``reduction.py`` ...) defines ``SPECS``, a list of
:class:`Spec` rows; ``ALL_SPECS`` is their concatenation.  The generic tests in
``tests/test_op_table.py`` derive from every row: forward against a NumPy float64 reference,
gradcheck in float64, error inputs, FLOPs hand counts; the meta-tests fail when a registered op
has no row or no FLOPs rule.  A new op costs one row.
"""

from tests.specs import elementwise
from tests.specs.table import ErrorCase, FlopsCase, Spec

ALL_SPECS: list[Spec] = [*elementwise.SPECS]

for _module in ("reduction", "linalg", "shape", "indexing", "device", "activation", "loss", "conv"):
    try:
        _mod = __import__(f"tests.specs.{_module}", fromlist=["SPECS"])
    except ModuleNotFoundError as exc:  # a family not written yet
        if exc.name != f"tests.specs.{_module}":
            raise
        continue
    ALL_SPECS.extend(_mod.SPECS)

__all__ = ["ALL_SPECS", "ErrorCase", "FlopsCase", "Spec"]
