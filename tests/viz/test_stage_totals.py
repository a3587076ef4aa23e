"""Stage totals: ``summarize(model, shape, depth=k)`` lists each module's whole work -- its
layers and the arithmetic of its own forward (a residual add) -- and the same numbers appear in
``draw(model, x, depth=k)`` and ``%lucid_flops``, MACs and FLOPs apart."""

from __future__ import annotations

import re

import pytest

import lucid
from lucid.cost import Cost
from lucid.models import resnet_18, summarize
from lucid_viz import draw
from lucid_viz.magic import count_source

SHAPE = (1, 3, 32, 32)


@pytest.fixture(scope="module")
def model():
    lucid.random.seed(0)
    return resnet_18(num_classes=10)


def drawn_boxes(dot: str) -> dict[str, str]:
    """module path -> its count line, read from the boxes of a collapsed drawing."""
    found = {}
    for path, label in re.findall(r'"m:([^"#]+)" \[label="((?:[^"\\]|\\.)*)"', dot):
        found[path] = next(x for x in label.split("\\n") if "MACs" in x or "FLOPs" in x)
    return found


def test_depth_1_rows_are_whole_stages_equal_to_draw_and_the_magic(model):
    s = summarize(model, SHAPE, depth=1, print_summary=False)
    rows = {r.name: r.cost for r in s.rows}
    assert list(rows)[:5] == ["conv1", "bn1", "relu", "maxpool", "layer1"]
    # layer1 holds its two blocks' residual adds: the total the issue measured
    assert rows["layer1"] == Cost(9_437_184, 90_880)
    assert s.other == Cost()  # nothing outside the rows at depth 1 but the flatten (0 work)
    total = Cost()
    for cost in rows.values():
        total = total + cost
    assert total == s.total
    x = lucid.zeros(*SHAPE, dtype=model.conv1.weight.dtype)
    boxes = drawn_boxes(draw(model, x, depth=1, fit=False).dot())
    for name in ("layer1", "layer2", "layer3", "layer4"):
        assert boxes[name] == rows[name].text(), name
    model.eval()  # as summarize and draw run it
    report, _ = count_source("model(x)", {"model": model, "x": x}, depth=1)
    magic = {r.path: r.forward for r in report.modules}
    for name in ("layer1", "layer2", "layer3", "layer4", "fc"):
        assert magic[f"model.{name}"] == rows[name], name


def test_depth_2_lists_the_blocks_and_the_layers_above(model):
    s = summarize(model, SHAPE, depth=2, print_summary=False)
    names = [r.name for r in s.rows]
    assert names[:4] == ["conv1", "bn1", "relu", "maxpool"]  # layers above level 2
    assert "layer1.0" in names and "layer1.1" in names and "layer1" not in names
    rows = {r.name: r.cost for r in s.rows}
    assert rows["layer1.0"] + rows["layer1.1"] == Cost(9_437_184, 90_880)
    assert sum(r.params for r in s.rows) == s.total_params
    assert "(ops outside these modules)" not in str(s)


def test_leaf_rows_keep_the_residual_adds_apart_and_depth_is_checked(model):
    s = summarize(model, SHAPE, print_summary=False)
    assert "(ops outside leaf layers)" in str(s) and s.other.flops > 0
    with pytest.raises(ValueError, match=r"summarize: depth must be None .* got 0"):
        summarize(model, SHAPE, depth=0, print_summary=False)
