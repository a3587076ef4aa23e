"""Run the harness's PyTorch branch with Lucid standing in for ``torch`` (and lucid.vision for
``torchvision``), in a process of its own: where PyTorch is not installed this still checks the
plumbing -- weights loaded into the "PyTorch" model, data rebuilt as its datasets, results
compared.  ``python -m tests.pytorch_programs.stand_in NAME ...`` prints ``AGREES NAME``."""

from __future__ import annotations

import sys
import warnings


def stand_in() -> None:
    import lucid
    import lucid.utils.data
    import lucid.vision

    for name in list(sys.modules):
        if name == "lucid" or name.startswith("lucid."):
            sys.modules["torch" + name[len("lucid"):]] = sys.modules[name]
    sys.modules["torchvision"] = lucid.vision
    for sub in ("datasets", "transforms", "utils", "models"):
        sys.modules[f"torchvision.{sub}"] = getattr(lucid.vision, sub)


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    stand_in()
    from tests.pytorch_programs import test_pytorch_programs as programs
    from tests.pytorch_programs.harness import run_on_lucid

    programs.HAS_TORCH = True
    for program in sys.argv[1:]:
        ns, init, data, out, model = run_on_lucid(program)
        programs._torch_agrees(program, init, data, out)
        print("AGREES", program)
