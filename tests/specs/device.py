"""Spec rows: moving between devices (needs MLX, which `make test` installs)."""

from __future__ import annotations

from tests.specs.table import FlopsCase, Spec, rand, unary

# these rows choose their devices themselves, so the cpu-vs-gpu parity run does not apply
NO_PARITY = {"parity": False}

SPECS = [
    Spec("to", lambda a: a.to("gpu").to("cpu"), lambda a: a.copy(), unary(), atol=0, rtol=0,
         flops=(FlopsCase((rand((3, 4)),), 0, 0),), extra=NO_PARITY),
    Spec("to", lambda a: (a.gpu() * 2).cpu(), lambda a: a * 2, unary(), label="via-op",
         atol=0, rtol=0, extra=NO_PARITY),
]
