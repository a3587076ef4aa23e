"""VGG-11/16 and ResNet-34/50: torchvision's layouts, names and parameter counts."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.models import summarize
from lucid.models.imgclf import resnet_34, resnet_50, vgg_11, vgg_16


def test_resnet_34_and_50_counts_names_and_shapes():
    lucid.random.seed(0)
    r34, r50 = resnet_34(), resnet_50()
    assert sum(p.size for p in r34.parameters()) == 21_797_672  # torchvision's resnet34
    s = summarize(r50, (1, 3, 32, 32), print_summary=False)
    assert s.total_params == 25_557_032  # torchvision's resnet50
    names = [n for n, _ in r50.named_parameters()]
    assert names[:3] == ["conv1.weight", "bn1.weight", "bn1.bias"]
    assert "layer1.0.conv3.weight" in names and "layer4.2.bn3.bias" in names
    assert "layer2.0.downsample.0.weight" in names
    assert r50.layer2[0].conv2.stride == (2, 2)  # v1.5: the stride on the 3x3 convolution
    assert r50.fc.weight.shape == (1000, 2048)
    out = r34.eval()(lucid.zeros(2, 3, 32, 32, dtype=lucid.Float32))
    assert out.shape == (2, 1000) and np.isfinite(out.numpy()).all()


@pytest.mark.slow
def test_vgg_11_and_16_counts_names_init_and_forward():
    lucid.random.seed(0)
    v11 = vgg_11()
    s = summarize(v11, (1, 3, 32, 32), print_summary=False)
    assert s.total_params == 132_863_336  # torchvision's vgg11
    assert s.rows[-1].output_shape == (1, 1000)
    names = [n for n, _ in v11.named_parameters()]
    assert names[:2] == ["features.0.weight", "features.0.bias"]
    assert names[-2:] == ["classifier.6.weight", "classifier.6.bias"]
    w = v11.classifier[0].weight.numpy()
    assert abs(w.std() - 0.01) < 1e-3 and float(np.abs(v11.features[0].bias.numpy()).max()) == 0
    conv = v11.features[0].weight.numpy()  # Kaiming-normal, fan-out: std sqrt(2 / (64·9))
    assert abs(conv.std() - np.sqrt(2 / (64 * 9))) < 0.02
    del v11
    assert sum(p.size for p in vgg_16().parameters()) == 138_357_544  # torchvision's vgg16
