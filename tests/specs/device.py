"""Spec rows: moving between devices (needs MLX, which `make test` installs)."""

from __future__ import annotations

from tests.specs.table import FlopsCase, Spec, rand, unary

SPECS = [
    Spec("to", lambda a: a.to("gpu").to("cpu"), lambda a: a.copy(), unary(), atol=0, rtol=0,
         flops=(FlopsCase((rand((3, 4)),), 0, 0),)),
    Spec("to", lambda a: (a.gpu() * 2).cpu(), lambda a: a * 2, unary(), label="via-op",
         atol=0, rtol=0),
]
