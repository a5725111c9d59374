"""Gradient-flow diagnostics on tiny layers: shapes, clipping arithmetic, files written."""

import json
import math

import pytest

from elman.core import diagnostics


@pytest.fixture(scope="module")
def flow():
    return diagnostics.gradient_flow(units=6, length=40, seed=0, clip_norm=0.5)


def test_result_shape(flow):
    assert flow["length"] == 40 and flow["units"] == 6 and flow["clip_norm"] == 0.5
    assert set(flow["cells"]) == {"rnn", "lstm", "gru", "rnn_explode"}
    assert flow["table_distances"] == [0, 1, 2, 5, 10, 20]
    for cell in flow["cells"].values():
        assert len(cell["norms"]) == len(cell["clipped_norms"]) == 40
        assert all(v >= 0 and math.isfinite(v) for v in cell["norms"])


def test_clipping_scales_every_step_by_one_factor(flow):
    for cell in flow["cells"].values():
        scale = cell["clip_scale"]
        assert scale == pytest.approx(min(1.0, 0.5 / cell["input_grad_global_norm"]))
        for raw, clipped in zip(cell["norms"], cell["clipped_norms"]):
            assert clipped == pytest.approx(raw * scale, rel=1e-5, abs=1e-35)
        total = math.sqrt(sum(v * v for v in cell["clipped_norms"]))
        assert total <= 0.5 * (1 + 1e-5)
        assert cell["weight_grad_global_norm_clipped"] <= 0.5 * (1 + 1e-5)


def test_exploding_reference_grows_and_tanh_rnn_vanishes(flow):
    explode = flow["cells"]["rnn_explode"]
    assert explode["far_near_ratio"] > 1.0
    assert explode["far_near_ratio_clipped"] == pytest.approx(explode["far_near_ratio"], rel=1e-4)
    assert flow["cells"]["rnn"]["far_near_ratio"] < 1e-2


def test_default_clip_norm_is_one_and_cells_are_validated():
    with pytest.raises(ValueError, match="Expected cells"):
        diagnostics.gradient_flow(cells=("lsmt",))
    with pytest.raises(ValueError, match="clip_norm"):
        diagnostics.gradient_flow(clip_norm=0)
    small = diagnostics.gradient_flow(cells=("gru",), units=3, length=5, explode_radius=None)
    assert small["clip_norm"] == 1.0 and set(small["cells"]) == {"gru"}


def test_plot_and_markdown(flow, tmp_path):
    png = tmp_path / "g.png"
    diagnostics.plot_gradient_flow(flow, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = diagnostics.gradient_flow_markdown(flow, png_name="g.png", heading_level=3)
    assert md.startswith("### Gradient flow") and "](g.png)" in md
    rows = [line for line in md.splitlines() if line.startswith("| 20 |")]
    assert len(rows) == 1 and rows[0].count("|") == 2 + 2 * len(flow["cells"])
    assert "exploding" in md and "vanishing" in md
    assert not diagnostics.gradient_flow_markdown(flow, heading_level=0).startswith("#")


def test_diagnose_gradients_writes_files(tmp_path, capsys):
    from elman import cli

    out = tmp_path / "diag"
    code = cli.main(["diagnose", "gradients", "--out", str(out), "--length", "12", "--units",
                     "3", "--cells", "rnn,gru"])
    assert code == 0
    for name in ("gradients.md", "gradients.html", "gradients.png", "gradients.json"):
        assert (out / name).is_file()
    text = (out / "gradients.json").read_text()
    assert json.loads(text)["length"] == 12
    assert "data:image/png;base64," in (out / "gradients.html").read_text()
    assert cli.main(["diagnose", "gradients", "--out", str(out), "--cells", "lsmt"]) == 2
    assert "Expected cells" in capsys.readouterr().err
