"""Textbook cases: Keras results against an independent oracle, never against printed values.

Case A is checked against exact fractions from data/textbook/derive_expected.py
(standard library only); Cases B–E against hand math with Python's `math`.
The printed-value flags are tested with synthetic wrong values.
"""

import importlib.util
import json
import math
from fractions import Fraction
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "textbook"
LONG_RED = "red filler filler filler filler filler filler key is"
LONG_BLUE = "blue filler filler filler filler filler filler key is"


def _oracle():
    spec = importlib.util.spec_from_file_location("textbook_oracle_for_tests",
                                                  DATA / "derive_expected.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _softmax(exact_logits):
    """Probabilities from exact logits, by hand (floats only at the exp)."""
    zs = [float(Fraction(z)) for z in exact_logits]
    top = max(zs)
    es = [math.exp(z - top) for z in zs]
    return [e / sum(es) for e in es]


def _close(a, b, tol=1e-12):
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b))
    return abs(float(a) - float(Fraction(b) if isinstance(b, str) else b)) <= tol


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from elman.tasks.textbook.runner import run_textbook

    out = tmp_path_factory.mktemp("textbook")
    record = run_textbook(report_dir=out, data_dir=DATA)
    return out, record


@pytest.fixture(scope="module")
def exact():
    oracle = _oracle()
    return oracle.derive(oracle.load_case(DATA / "case_a.json"))


def test_expected_file_is_derived_from_current_data(exact):
    oracle = _oracle()
    stored = json.loads((DATA / "case_a_expected.json").read_text(encoding="utf-8"))
    assert stored["derived_from"]["sha256"] == oracle.sha256_of(DATA / "case_a.json")
    for key in ("rnn", "window", "E1", "E2", "E3"):
        assert stored[key] == exact[key]


def test_case_a_rnn_steps_match_exact_fractions(run, exact):
    _, record = run
    A = record["A"]
    assert set(A["rnn"]) == set(exact["rnn"])
    for text, expected in exact["rnn"].items():
        steps = A["rnn"][text]["steps"]
        assert [s["token"] for s in steps] == text.split(" ")
        for got, want in zip(steps, expected["steps"], strict=True):
            assert _close(got["h"], want["h"])
            assert _close(got["h_prev"], want["h_prev"])
            assert _close(got["logits"], want["logits"])
            assert _close(got["probs"], _softmax(want["logits"]))
        assert A["rnn"][text]["choice"] == expected["choice"]


def test_case_a_window_matches_exact_fractions(run, exact):
    _, record = run
    for text, expected in exact["window"].items():
        got = record["A"]["window"][text]
        assert _close(got["logits"], expected["logits"])
        assert _close(got["probs"], _softmax(expected["logits"]))
        assert got["choice"] == expected["choice"]


def test_case_a_lesson_window_identical_rnn_differs(run, exact):
    _, record = run
    A = record["A"]
    assert A["window"][LONG_RED]["probs"] == A["window"][LONG_BLUE]["probs"]
    assert A["rnn"][LONG_RED]["steps"][-1]["probs"] != A["rnn"][LONG_BLUE]["steps"][-1]["probs"]
    # Exact: the blue cue left in the state is smaller than the red bias.
    z = [Fraction(v) for v in exact["rnn"][LONG_BLUE]["steps"][-1]["logits"]]
    assert z[1] < z[0]
    assert A["lesson"]["blue_long"]["cue_below_bias"] is True
    assert A["oracle_check"]["choices_agree"] and A["oracle_check"]["expected_file_current"]


def test_case_a_exercises_match_oracle(run, exact):
    _, record = run
    A = record["A"]
    answer = exact["E1"]["answer"]
    assert A["E1"]["fillers"] == answer["fillers"]
    assert _close(A["E1"]["h"], answer["h"]) and _close(A["E1"]["logits"], answer["logits"])
    assert A["E1"]["choice"] == answer["choice"]
    # The search looked at every smaller count and none of them chose the target.
    assert [s["fillers"] for s in A["E1"]["searched"]] == list(range(answer["fillers"] + 1))
    assert all(s["choice"] != "red" for s in A["E1"]["searched"][:-1])
    assert _close(A["E2"]["h"], exact["E2"]["h"])
    assert _close(A["E2"]["logits"], exact["E2"]["logits"])
    assert A["E2"]["choice"] == exact["E2"]["choice"]
    e3 = exact["E3"]
    assert A["E3"]["reset_every_token"]["choice"] == e3["reset_every_token"]["choice"]
    for got, want in zip(A["E3"]["reset_every_token"]["steps"], e3["reset_every_token"]["steps"],
                         strict=True):
        assert _close(got["h"], want["h"]) and _close(got["logits"], want["logits"])
    assert A["E3"]["reset_once"]["choice"] == e3["reset_once"]["choice"]
    assert A["E3"]["destroyed"] == (e3["reset_once"]["choice"] == "blue"
                                    and e3["reset_every_token"]["choice"] != "blue")


def test_cases_b_c_against_hand_math(run):
    _, record = run
    h1 = math.tanh(1.0)
    assert _close(record["B"]["h"], [h1, math.tanh(0.5 * h1)])

    C = record["C"]
    hs, h = [], 0.0
    for x in [0.0, -1.0, 0.5, 1.0]:
        h = math.tanh(x + 0.5 * h)
        hs.append(h)
    z = 2.0 * hs[-1]
    p = 1.0 / (1.0 + math.exp(-z))
    assert _close(C["h"], hs) and _close(C["z"], z) and _close(C["p"], p)
    assert _close(C["loss_nat"], -math.log(p))
    assert _close(C["loss_bit"], -math.log2(p))
    # BPTT by hand: dL/dz = p - 1, dz/dh4 = 2, dh_t/dpre_t = 1 - h_t^2, dpre_t/dh_{t-1} = 0.5.
    grads, upstream = [0.0] * 4, (p - 1.0) * 2.0
    for t in range(3, -1, -1):
        local = upstream * (1.0 - hs[t] ** 2)
        grads[t] = local
        upstream = local * 0.5
    assert _close(C["grad_x"], grads)
    assert _close(C["grad_x_bit"], [g / math.log(2.0) for g in grads])


def test_case_d_lstm_cell_gates(run):
    _, record = run
    D = record["D"]
    for gate, want in (("i", 0.2), ("f", 0.9), ("c_tilde", 0.5)):
        assert abs(D["gates"][gate] - want) <= 2e-16
    assert abs(D["c"] - (0.9 * 0.8 + 0.2 * 0.5)) <= 1e-15
    assert abs(D["kept"] - 0.9 * 0.8) <= 1e-15
    assert abs(D["written"] - 0.2 * 0.5) <= 1e-15
    assert abs(D["h"] - 0.5 * math.tanh(D["c"])) <= 1e-15


def test_case_e_products_and_gradient_flow(run):
    out, record = run
    E = record["E"]
    assert E["vanish"] == 0.5 ** 10 and E["explode"] == 1.5 ** 10
    assert E["products"]["vanish"]["exact"] == str(Fraction(1, 2) ** 10)
    flow = E["gradient_flow"]
    assert flow["length"] >= 100 and set(flow["cells"]) >= {"rnn", "lstm", "gru", "rnn_explode"}
    explode = flow["cells"]["rnn_explode"]
    assert explode["far_near_ratio"] > 1e3 and explode["clip_scale"] < 1.0
    assert max(explode["clipped_norms_at"].values()) <= flow["clip_norm"] * (1 + 1e-6)
    for cell in flow["cells"].values():  # clipping never changes the ratio between steps
        r, rc = cell["far_near_ratio"], cell["far_near_ratio_clipped"]
        assert r == pytest.approx(rc, rel=1e-4, abs=1e-30)
    assert flow["cells"]["rnn"]["far_near_ratio"] < 1e-3
    assert (out / "case_e_gradients.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cases_f_g(run):
    _, record = run
    F, G = record["F"], record["G"]
    assert F["bidirectional"]["per_position"] == 6
    assert F["bidirectional"]["output_shape"] == [1, 8, 6]
    assert F["bidirectional"]["concat_is_forward_then_backward"]
    assert (F["seq2seq"]["input_length"], F["seq2seq"]["output_length"]) == (8, 6)
    assert len(F["seq2seq"]["decoded"]) <= F["seq2seq"]["length_cap"]
    assert G["grad_check"]["equal"] and G["grad_check"]["max_abs_diff"] < 1e-12
    assert G["loss_sum"] == pytest.approx(sum(G["per_step_loss"]), abs=1e-12)
    assert G["generation"]["naive"] == G["generation"]["carried_state"]
    assert G["tbptt"]["same_loss"] and G["tbptt"]["cross_boundary_grad"] == 0.0


def test_case_f_seq2seq_decodes_the_sentence_and_stops_at_the_end_token(run):
    """Hand derivation (SPEC, Case F): the encoder–decoder is fitted to the one pair
    我爱自然语言处理 → I love natural language processing <eos>. If its mean per-step loss
    is below ln(2)/6, the summed loss is below ln 2, so every step gives its target token
    probability above 1/2: the target is the argmax at every step under teacher forcing.
    Greedy decoding feeds its own prediction back, which is then the target token, so it
    runs exactly the teacher-forced steps: it must print the five words, then <eos>,
    and stop there after 6 of its 10 allowed tokens.

    Mutations that fail here (tried, textbook/cases_training.py `_seq2seq`): the stop
    at <eos> removed (decoding runs on to the cap); the start token fed at every step
    instead of the previous prediction; the decoder state not carried from step to step
    (`seq, state = decoder(...)` → `seq, _ = decoder(...)`).
    """
    seq2seq = run[1]["F"]["seq2seq"]
    assert seq2seq["source"] == "我爱自然语言处理" and seq2seq["input_length"] == 8
    assert seq2seq["final_loss"] < math.log(2) / 6
    assert seq2seq["decoded"] == ["I", "love", "natural", "language", "processing", "<eos>"]
    assert seq2seq["stopped_at_eos"] and seq2seq["length_cap"] == 10


@pytest.mark.slow
def test_case_f_greedy_decoding_stops_at_its_cap():
    """With a cap of 3 tokens the same fitted pair decodes to its first three words and no
    <eos> (the cap, not the end token, stops it).

    Mutation that fails here (tried): `for _ in range(cap)` → `range(cap + 1)`.
    """
    import numpy as np

    from elman.tasks.textbook.cases_training import _seq2seq

    chars = list("我爱自然语言处理")
    source_vocab = sorted(set(chars))
    target_vocab = ["<start>", "<eos>", "I", "love", "natural", "language", "processing"]
    source_ids = np.array([[source_vocab.index(c) for c in chars]], dtype="int32")
    target = ["I", "love", "natural", "language", "processing", "<eos>"]
    loss, decoded = _seq2seq(source_vocab, source_ids, target, target_vocab, steps=30, cap=3)
    assert loss < math.log(2) / 6
    assert decoded == ["I", "love", "natural"]


def test_run_json_has_the_documented_keys(run):
    out, _ = run
    for name in ("report.md", "report.html", "run.json", "case_a_probs.png"):
        assert (out / name).is_file()
    text = (out / "run.json").read_text(encoding="utf-8")
    rec = json.loads(text)
    assert text == json.dumps(rec, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    A = rec["A"]
    for text_ in ("red key is", "blue key is", LONG_RED, LONG_BLUE):
        for step in A["rnn"][text_]["steps"]:
            assert {"token", "h", "logits", "probs"} <= set(step)
        assert A["rnn"][text_]["choice"] in ("red", "blue")
        assert {"logits", "probs", "choice"} <= set(A["window"][text_])
    assert {"fillers", "h", "logits", "choice"} <= set(A["E1"])
    assert {"h", "logits", "choice"} <= set(A["E2"])
    assert "E3" in A and "h" in rec["B"]
    assert {"h", "p", "loss_nat", "loss_bit", "grad_x"} <= set(rec["C"])
    assert {"c", "kept", "written"} <= set(rec["D"])
    assert {"vanish", "explode"} <= set(rec["E"])
    assert {"F", "G", "flags"} <= set(rec)
    for flag in rec["flags"]:
        assert {"case", "quantity", "printed", "computed", "step"} <= set(flag)
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in html


def test_flags_are_consistent_with_their_precision(run):
    _, record = run
    flagged = {f["id"] for f in record["flags"]}
    for check in record["checks"]:
        if check["difference"] is not None and check["tolerance"]:
            assert (check["difference"] > check["tolerance"]) == (check["id"] in flagged)


def test_flag_mechanism_with_synthetic_wrong_values(run):
    from elman.tasks.textbook.printed import check_printed

    _, record = run
    red = ["A", "rnn", "red key is", "steps"]

    def entry(id_, path, printed, step, series="s"):
        return {"id": id_, "case": "X", "series": series, "quantity": id_, "path": path,
                "printed": printed, "step": step}

    h1 = record["B"]["h"][0]
    synthetic = [
        entry("ok_exact", red + [0, "h"], "[1, 0]", 1),
        entry("ok_rounded", ["B", "h", 0], f"{h1:.4f}", 1, "b"),
        entry("wrong_rounded", ["B", "h", 0], f"{h1 + 2e-4:.4f}", 1, "b2"),
        entry("wrong_at_2", red + [1, "h"], "[0.6, 0]", 2),
        entry("wrong_at_3", red + [2, "logits"], "[0.45, 0]", 3),
        entry("ok_coarse", red + [2, "logits"], "[0.4, 0]", 3, "c"),  # 0.375 is within 0.05
        entry("wrong_fraction", red + [2, "h"], "[1/3, 0]", 3, "f"),
        entry("wrong_word", ["A", "rnn", "blue key is", "choice"], "red", 3, "w"),
    ]
    checks, flags = check_printed(record, synthetic)
    by_id = {f["quantity"]: f for f in flags}
    assert set(by_id) == {"wrong_rounded", "wrong_at_2", "wrong_at_3", "wrong_fraction",
                          "wrong_word"}
    assert by_id["wrong_at_3"]["step"] == 2 and by_id["wrong_at_3"]["quantity_step"] == 3
    assert by_id["wrong_at_2"]["step"] == 2
    assert by_id["wrong_rounded"]["tolerance"] == pytest.approx(5e-5)
    assert by_id["wrong_word"]["computed"] == record["A"]["rnn"]["blue key is"]["choice"]
    assert all(c["agrees"] for c in checks if c["id"].startswith("ok_"))


def test_main_json_prints_sorted_record(run, monkeypatch, capsys, tmp_path):
    from elman.tasks.textbook import runner as textbook

    _, record = run
    monkeypatch.setattr(textbook, "run_textbook", lambda out, data: record)
    assert textbook.main(["--json", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert json.loads(printed)["A"]["rnn"]["red key is"]["choice"] == record["A"]["rnn"][
        "red key is"]["choice"]
    assert printed == textbook.record_json(record)


def test_main_reports_a_missing_data_folder(tmp_path, capsys):
    from elman.tasks.textbook.runner import main

    assert main(["--out", str(tmp_path / "out"), "--data", str(tmp_path / "nope")]) == 2
    assert "printed_values.json" in capsys.readouterr().err
