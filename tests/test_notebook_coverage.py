"""Every public feature of the product (the tensor, autograd, nn, data, optim, models and the
notebook layer, and what was added since) appears in at least one notebook code cell.

The notebooks are the product's front door: a feature no notebook uses is one a class never
meets.  FEATURES maps each feature (in the spec's order) to the patterns that show it being
*used* in code (a regex over the code cells of notebooks/*.ipynb, magics included); the test
lists every feature that no notebook uses, so a new feature without a lesson fails here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def _layers(*names: str) -> dict[str, str]:
    return {f"nn.{n}": rf"\b{n}\(" for n in names}


FEATURES: dict[str, str] = {
    # §1 Tensor
    "lucid.Tensor(...)": r"lucid\.Tensor\(",
    "lucid.tensor(...)": r"lucid\.tensor\(",
    "requires_grad=": r"requires_grad\s*=",
    "keep_grad": r"keep_grad",
    "graph metadata _prev": r"\._prev\b",
    "graph metadata _op": r"\._op\b",
    "Tensor.grad": r"\.grad\b",
    "is_leaf": r"\.is_leaf\b",
    "no_grad (context manager)": r"with lucid\.no_grad\(\)",
    "no_grad (decorator)": r"@lucid\.no_grad",
    "grad_enabled()": r"grad_enabled\(\)",
    "backward()": r"\.backward\(",
    "retain_graph=True": r"retain_graph\s*=\s*True",
    "register_hook": r"\.register_hook\(",
    "detach()": r"\.detach\(\)",
    "numpy()": r"\.numpy\(\)",
    "tolist()": r"\.tolist\(\)",
    "item()": r"\.item\(\)",
    "shape / ndim / size": r"\.ndim\b",
    "Tensor.size": r"\.size\b",
    "Tensor.T": r"\.T\b",
    "Tensor.mT": r"\.mT\b",
    "astype": r"\.astype\(",
    "to(device)": r"\.to\(\s*[\"'](gpu|cpu)",
    "cpu()": r"\.cpu\(\)",
    "gpu()": r"\.gpu\(\)",
    "free()": r"\.free\(\)",
    "is_free": r"\.is_free\b",
    "Tensor.eval()": r"\.eval\(\)",
    "Tensor.flops": r"\.flops\b",
    "fancy indexing with gradient": r"\[\s*\[\d",
    "boolean-mask indexing": r"\[[^\]\n]*(>|<)[^\]\n]*\]",
    "in-place op bumps the version counter": r"_version|\+=\s",
    # §2 operations and backends
    "mixed-device RuntimeError": r"RuntimeError",
    "gpu_status()": r"gpu_status\(\)",
    "gpu_available()": r"gpu_available\(\)",
    "parse_mlx_indexing": r"parse_mlx_indexing",
    "lucid.evaluate": r"lucid\.evaluate\(",
    "Module.to(device)": r"model\w*\.to\(|net\w*\.to\(",
    # §3 dtypes
    "Numeric": r"\bNumeric\b",
    **{f"lucid.{n}": rf"lucid\.{n}\b" for n in (
        "Int", "Int8", "Int16", "Int32", "Int64", "Float", "Float16", "Float32", "Float64",
        "Complex", "Complex64")},
    "Numeric.cpu / .gpu": r"(Float\d*|Int\d*|Complex\d*)\.(cpu|gpu)\b",
    "Numeric.parse(device)": r"\.parse\(",
    "to_numeric_type": r"to_numeric_type\(",
    "gpu float64 storage policy": r"gpu_float64_storage_bits|float64_on_gpu|storage",
    # §4 FLOPs
    "count_flops()": r"count_flops\(\)",
    "flops_enabled()": r"flops_enabled\(\)",
    "summarize(model, input_shape)": r"summarize\(",
    "everything in FLOPs (1 MAC = 2 FLOPs)": r"in_flops|flops_unit=\"FLOPs\"",
    "backward FLOPs": r"flops_bwd|backward\s*=\s*True",
    # §5 nn, Parameter, Buffer
    "nn.Parameter": r"Parameter\(",
    "nn.Buffer": r"Buffer\(",
    "register_parameter": r"register_parameter\(",
    "register_buffer": r"register_buffer\(",
    "add_module": r"add_module\(",
    "parameters()": r"\.parameters\(\)",
    "named_parameters()": r"\.named_parameters\(\)",
    "buffers()": r"\.buffers\(\)",
    "named_buffers()": r"\.named_buffers\(\)",
    "children()": r"\.children\(\)",
    "modules()": r"\.modules\(\)",
    "named_modules()": r"\.named_modules\(\)",
    "state_dict(keep_vars=True)": r"state_dict\(keep_vars\s*=\s*True",
    "_state_dict_pass_attr": r"_state_dict_pass_attr",
    "load_state_dict strict error": r"load_state_dict\(",
    "load_state_dict(strict=False)": r"strict\s*=\s*False",
    "train() / eval()": r"\.train\(\)",
    "forward pre-hook": r"register_forward_pre_hook\(",
    "forward hook": r"register_forward_hook\(",
    **_layers(
        "Linear", "Identity", "Flatten", "Conv1d", "Conv2d", "ConvTranspose2d", "MaxPool1d",
        "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool2d", "BatchNorm1d",
        "BatchNorm2d", "LayerNorm", "GroupNorm", "Dropout", "Embedding", "ReLU", "LeakyReLU",
        "ELU", "GELU", "SiLU", "Sigmoid", "Tanh", "Softmax", "MultiHeadAttention", "MSELoss",
        "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "HuberLoss",
        "Sequential", "ModuleList", "ModuleDict"),
    "a loss refusing to broadcast": r"(mse_loss|MSELoss)[\s\S]{0,400}?(ValueError|Error)",
    "nn.functional": r"\bF\.\w+\(|functional\.\w+\(",
    "one_hot(..., dtype=)": r"one_hot\([^\n]*dtype\s*=",
    **{f"nn.init.{n}": rf"\b{n}\(" for n in (
        "xavier_uniform_", "kaiming_uniform_", "uniform_", "normal_", "constant_")},
    "optim.SGD with momentum": r"SGD\([^\n]*momentum",
    "SGD nesterov": r"nesterov\s*=\s*True",
    "weight_decay": r"weight_decay\s*=",
    "optim.Adam": r"\bAdam\(",
    "Adam amsgrad": r"amsgrad\s*=\s*True",
    "optim.AdamW": r"\bAdamW\(",
    "optim.RMSprop": r"\bRMSprop\(",
    "optim.Adagrad": r"\bAdagrad\(",
    "Optimizer(params, defaults)": r"defaults\s*=\s*\{",
    "zero_grad()": r"\.zero_grad\(\)",
    "step()": r"\.step\(\)",
    "param_groups": r"\.param_groups\b",
    "optimizer state_dict": r"opt\w*\.state_dict\(\)|optimizer\.state_dict\(\)",
    **{f"lr_scheduler.{n}": rf"\b{n}\(" for n in (
        "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LambdaLR",
        "ReduceLROnPlateau")},
    "data.Dataset": r"\bDataset\b",
    "data.TensorDataset": r"\bTensorDataset\(",
    "data.DataLoader(shuffle, drop_last)": r"DataLoader\([^\n]*shuffle",
    "DataLoader drop_last": r"drop_last\s*=",
    "data.random_split": r"random_split\(",
    **{f"lucid.random.{n}": rf"random\.{n}\(" for n in (
        "seed", "rand", "randn", "randint", "uniform", "bernoulli", "permutation")},
    "random with dtype= and device=": r"random\.\w+\([^\n]*device\s*=",
    "lucid.save": r"lucid\.save\(",
    "lucid.load": r"lucid\.load\(",
    "models.MLP": r"\bMLP\(",
    "models.LeNet-5": r"lenet_5\(|LeNet5\(",
    "models.resnet_18": r"resnet_18\(",
    # §6 lucid_viz
    "trace (the graph model)": r"\btrace\(|trace_with_modules\(",
    "draw": r"\bdraw\(",
    "draw by module depth": r"depth\s*=",
    "node-count guard (max_nodes)": r"max_nodes\s*=",
    "backward stepper": r"step_backward\(",
    "stepper HTML export": r"\.html\(|save_html|to_html|\.save\([^\n]*\.html",
    "%load_ext lucid_viz": r"%load_ext lucid_viz",
    "%lucid_flops (line)": r"(?m)^\s*%lucid_flops",
    "%%lucid_flops (cell)": r"(?m)^%%lucid_flops",
    "%%lucid_flops -o": r"lucid_flops\s+-o",
    "plot_flops_per_layer": r"plot_flops_per_layer\(",
    "plot_grad_norms": r"plot_grad_norms\(",
    "plot_loss": r"plot_loss\(",
    # issue 13: names and values on the pictures
    "Tensor(name=...)": r"name\s*=\s*\"",
    "draw(show=(...))": r"show\s*=\s*\(",
    "Tensor.cost (MACs and FLOPs apart)": r"\.cost\b",
    # issue 14: the full engine, part 1
    "create_graph=True": r"create_graph\s*=\s*True",
    "gradgradcheck": r"gradgradcheck\(",
    **{f"functional.{n}": rf"functional\.{n}\(" for n in ("hessian", "hvp", "jacobian")},
    **{f"lucid.linalg.{n}": rf"linalg\.{n}\(" for n in (
        "solve", "inv", "det", "slogdet", "cholesky", "qr", "svd", "eigh", "pinv", "norm",
        "matrix_power")},
    **{f"einops.{n}": rf"einops\.{n}\(" for n in ("rearrange", "reduce", "repeat")},
    "einsum with a repeated index": r"einsum\(\"ii->",
    **{f"lucid.{n}": rf"lucid\.{n}\(" for n in (
        "prod", "clamp", "cube", "unique", "nonzero", "histogram", "meshgrid", "diag")},
    "std/var with ddof": r"\.(std|var)\(ddof",
    "bitwise operators on integers": r"\(~\w+\)",
    "in-place methods": r"\.add_\(|\.mul_\(",
    **_layers("SELU", "Softplus", "Mish", "Hardswish", "Hardsigmoid", "ReLU6", "Conv3d",
              "ConvTranspose1d", "MaxPool3d", "AvgPool3d", "AdaptiveMaxPool2d", "Upsample",
              "Dropout2d", "DropPath", "InstanceNorm2d", "Bilinear", "Unfold", "Fold",
              "ParameterList", "ParameterDict", "L1Loss", "SmoothL1Loss", "KLDivLoss"),
    **{f"F.{n}": rf"F\.{n}\(" for n in ("interpolate", "pad", "normalize")},
    **{n: rf"\b{n}\(" for n in ("clip_grad_norm_", "clip_grad_value_", "parameters_to_vector",
                                "vector_to_parameters")},
    **{f"optim.{n}": rf"\b{n}\(" for n in ("NAdam", "RAdam", "Adamax", "Adadelta")},
    **{f"lr_scheduler.{n}": rf"\b{n}\(" for n in ("LinearLR", "OneCycleLR", "CyclicLR",
                                                  "NoamScheduler", "SequentialLR")},
    **{f"data.{n}": rf"\b{n}\(" for n in ("ConcatDataset", "Subset")},
}


def _code(path: Path) -> str:
    cells = json.loads(path.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def test_the_course_has_its_notebooks():
    names = [p.stem for p in NOTEBOOKS]
    assert names == [
        "00_start_here", "01_tensors_and_dtypes", "02_autograd_and_the_dag",
        "03_backward_step_by_step", "04_gradients_by_hand", "05_devices_cpu_gpu", "06_flops",
        "07_parameters_buffers_state_dict", "08_training_an_mlp", "09_reading_a_training_run",
        "10_convolutional_networks", "11_resnet", "12_convolutions_and_normalisation",
        "13_activations_and_losses", "14_optimizers_and_data", "15_build_it_yourself",
        "16_recurrent_networks", "17_gradients_through_time", "18_attention", "19_a_tiny_gpt",
        "20_variational_autoencoders", "21_latent_spaces_and_gans", "22_beyond_first_derivatives",
        "23_data_parallel",
    ]


def test_every_public_feature_appears_in_a_notebook():
    code = {p.stem: _code(p) for p in NOTEBOOKS}
    missing = [f for f, pattern in FEATURES.items()
               if not any(re.search(pattern, src) for src in code.values())]
    assert not missing, (
        f"{len(missing)} of {len(FEATURES)} public features appear in no notebook: "
        + "; ".join(missing)
    )


def test_students_see_no_test_markers_and_checked_cells_are_tagged():
    import json

    checked = 0
    for path in NOTEBOOKS:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            assert "NBVAL" not in "".join(cell["source"]), path.name
            checked += "nbval-check-output" in cell.get("metadata", {}).get("tags", [])
    assert checked >= 80  # the lessons' printed numbers are compared by nbval
