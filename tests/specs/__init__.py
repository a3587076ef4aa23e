"""The op spec table: one row per op (or per op variant).

Each family file (``elementwise.py``, ``reduction.py`` ...) defines ``SPECS``, a list of
:class:`Spec` rows; ``ALL_SPECS`` is their concatenation.  The generic tests in
``tests/test_op_table.py`` derive from every row: forward against a NumPy float64 reference,
gradcheck in float64, error inputs, FLOPs hand counts; the meta-tests fail when a registered op
has no row or no FLOPs rule.  A new op costs one row.
"""

import importlib
import pkgutil

from tests.specs.table import ErrorCase, FlopsCase, Spec

ALL_SPECS: list[Spec] = []

# every family file in this folder (a new family is picked up by being written), in name order
for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name != "table":
        ALL_SPECS.extend(importlib.import_module(f"tests.specs.{_info.name}").SPECS)

__all__ = ["ALL_SPECS", "ErrorCase", "FlopsCase", "Spec"]
