# The configuration space, presets and the analytic model from Python.
import pytest

import carb


def test_config_is_validated_and_keyed():
    c = carb.Config("bottleneck", 50, 0.5, 128, 8, "bf16")
    assert c.key == "bottleneck-50-w0.5-r128-b8-bf16"
    assert (c.family, c.depth, c.width, c.resolution, c.batch, c.precision) == ("bottleneck", 50, 0.5, 128, 8, "bf16")
    assert c == carb.Config(family="bottleneck", depth=50, width=0.5, resolution=128, batch=8, precision="bf16")
    assert len({c, carb.Config("bottleneck", 50, 0.5, 128, 8, "bf16")}) == 1


def test_bad_configurations_raise_input_error_with_carbs_message():
    with pytest.raises(carb.InputError, match="family"):
        carb.Config("dense", 18, 1, 224, 1, "fp32")
    with pytest.raises(carb.InputError, match="depth"):
        carb.Config("basic", 19, 1, 224, 1, "fp32")
    with pytest.raises(carb.Error):  # the base class catches every carb error
        carb.Config("basic", 18, 1, 224, 0, "fp32")


def test_presets():
    assert {"paper", "screen", "tiny", "deploy"} <= set(carb.preset_names())
    tiny = carb.preset("tiny")
    assert len(tiny) > 0 and all(isinstance(c, carb.Config) for c in tiny)
    assert len(carb.preset("screen")) == 3072
    with pytest.raises(carb.InputError, match="paper"):  # names the known presets
        carb.preset("no-such-preset")


def test_arch_counts_resnet18_like_torchvision():
    a = carb.arch(carb.Config("basic", 18, 1.0, 224, 1, "fp32"))
    assert a["params"] == 11689512  # torchvision resnet18
    assert a["flops"] == 2 * a["macs"] > 0
    assert "layers" not in a
    assert len(carb.arch(carb.Config(), layers=True)["layers"]) > 18


def test_features_are_the_matrix_models_learn_from():
    configs = [carb.Config("basic", 18, 1.0, 224, 1, "fp32"), carb.Config("bottleneck", 50, 0.5, 64, 8, "bf16")]
    x, names = carb.features(configs)
    assert x.shape == (2, len(names)) and x.dtype.name == "float32"
    assert len(set(names)) == len(names)
    # The FLOPs feature follows carb.arch for each configuration.
    gflops = [n for n in names if "flop" in n.lower()]
    assert gflops, names
    assert (x[0] != x[1]).any()
    assert carb.features("tiny")[0].shape[0] == len(carb.preset("tiny"))


def test_config_refuses_a_bool_for_a_number():
    # Seventeenth hostile pass: Config(..., batch=True) was batch 1, width=True width 1.
    import numpy as np
    for kwargs in ({"batch": True}, {"width": True}, {"depth": False}, {"resolution": np.bool_(True)}):
        with pytest.raises(carb.InputError, match="not a number"):
            carb.Config("basic", **{"depth": 18, "width": 1.0, "resolution": 64, "batch": 8, **kwargs})
    assert carb.Config("basic", np.int64(18), np.float32(0.5), 64, 8).key == "basic-18-w0.5-r64-b8-fp32"


def test_config_takes_only_integers_for_integer_fields():
    # Twenty-third hostile pass: np.float32(8.9), Fraction(17, 2) and Decimal("8.5") were truncated to
    # batch 8 while a Python float was refused. No non-integer type is taken, whole or not.
    from decimal import Decimal
    from fractions import Fraction
    import numpy as np
    for bad in (np.float32(8.9), np.float32(8.0), np.float16(8.5), np.longdouble(8.5), Fraction(17, 2),
                Decimal("8.5"), Decimal("8"), 8.0, np.float64(8.0)):
        for field in ("depth", "resolution", "batch"):
            args = {"depth": 18, "width": 0.5, "resolution": 64, "batch": 8, field: bad}
            with pytest.raises(carb.InputError, match="not an integer"):
                carb.Config("basic", **args)
    # Integers of any kind are taken, and a fraction is a width.
    assert carb.Config("basic", np.int32(18), Fraction(1, 2), np.uint16(64), np.int8(8)).key == "basic-18-w0.5-r64-b8-fp32"


def test_campaign_order_is_the_profilers_and_visits_in_rounds():
    paper = carb.preset("paper")
    whole = carb.campaign_order(paper, 7)
    rounds = carb.campaign_order(paper, 7, per_arch=6)
    assert sorted(c.key for c in whole) == sorted(c.key for c in paper) == sorted(c.key for c in rounds)
    assert carb.campaign_order(paper, 7, per_arch=6) == rounds  # seeded

    def arch(c):
        return (c.family, c.depth, c.width, c.precision)

    def visits(order):
        out = []
        for c in order:
            if not out or out[-1][0] != arch(c):
                out.append((arch(c), []))
            out[-1][1].append(c)
        return out

    archs = [a for a, _ in visits(whole)]
    assert len(archs) == len(set(archs)) == 120  # one visit each
    v = visits(rounds)
    assert [a for a, _ in v] == archs * 6  # the same architecture order, six rounds
    assert all(len(cs) == 6 and len({c.resolution for c in cs}) == 4 for _, cs in v)
    with pytest.raises(carb.InputError, match="per_arch"):
        carb.campaign_order(paper, 7, per_arch=-1)
    with pytest.raises(carb.InputError, match="whole"):
        carb.campaign_order(paper, 7, per_arch=1.5)
    with pytest.raises(carb.InputError, match="seed"):
        carb.campaign_order(paper, True)
    # Seeds past 32 bits, as `carb profile --arch-order` takes them.
    big = carb.campaign_order("tiny", 3_000_000_000)
    assert sorted(c.key for c in big) == sorted(c.key for c in carb.preset("tiny"))
