"""(being written)"""

from __future__ import annotations

__all__: list[str] = []

#: Tensor methods this module provides: name -> function (attached by tensor_methods.py)
METHODS: dict = {}
