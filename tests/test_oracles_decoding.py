"""Independent oracles for beam search and temperature sampling.

Beam search (pipelines/tasks/translation/decoding.py) is checked against brute force:
every output sequence of a tiny model (target alphabet {1, 2, 3=end, 4, 5}, caps of 1 to
3 tokens) is scored by one teacher-forced pass of the model (`model((source, target_in))`,
not the decoder's `decode_step` loop), the GNMT length penalty is computed here, and a
plain-Python beam search over those scores gives the K hypotheses each width keeps, in
order. A constant-distribution model gives a case worked out by hand in which the length
penalty must change the answer.

Sampling (pipelines/tasks/lm/generation.py) is checked against softmax(logits / T)
computed here in float64 from the model's own forward pass: a chi-square test over
seeded draws for the first and the second generated token, and T → 0 against greedy.
"""

import itertools
import math

import numpy as np
import pytest

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

from elman.models.language_model import LanguageModel  # noqa: E402
from elman.models.seq2seq_translator import Seq2SeqTranslator  # noqa: E402
from elman.tasks.lm.generation import generate  # noqa: E402
from elman.tasks.translation.decoding import beam_search_decode  # noqa: E402

START, END, VOCAB = 2, 3, 6  # target ids: 0 pad, 1 OOV, 2 start, 3 end, 4 and 5 words
ALPHABET = (1, 2, 3, 4, 5)  # everything but padding can be generated (the start id too)
SOURCES = np.array([[3, 4, 5, 0], [6, 7, 0, 0], [2, 5, 7, 4], [7, 7, 2, 0], [5, 0, 0, 0],
                    [4, 6, 3, 2], [2, 2, 0, 0], [6, 3, 5, 0]], "int32")
ALPHAS = (0.0, 0.6, 2.0)


def gnmt_penalty(length, alpha):
    """((5 + |Y|) / 6) ** alpha, Wu et al. 2016, eq. 14 (|Y| counts the end token)."""
    return ((5.0 + length) / 6.0) ** alpha


def log_softmax(logits):
    logits = np.asarray(logits, "float64")
    shifted = logits - logits.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


@pytest.fixture(scope="module")
def peaked_model():
    """A seeded random translator with a sharpened output layer (history-dependent,
    peaked distributions, so that widths, caps and penalties give different answers)."""
    keras.utils.set_random_seed(2)
    model = Seq2SeqTranslator(8, VOCAB, embedding_dim=6, units=6, attention="luong")
    model((SOURCES, np.full((len(SOURCES), 2), START, "int32")))
    kernel = model.output_projection.kernel
    kernel.assign(kernel.numpy() * 3.0)
    bias = np.random.default_rng(2).normal(0.0, 0.5, VOCAB).astype("float32")
    bias[END] += 1.0  # sentences end at different lengths, so the penalty matters
    model.output_projection.bias.assign(bias)
    return model


@pytest.fixture(scope="module")
def sequence_scores(peaked_model):
    """log P(y | source) of every token sequence of length 1..3 for every source, each by
    one teacher-forced pass: {row: {sequence: log-probability}} (float64 sums)."""
    scores = {row: {} for row in range(len(SOURCES))}
    for length in (1, 2, 3):
        sequences = list(itertools.product(ALPHABET, repeat=length))
        pairs = [(row, s) for row in range(len(SOURCES)) for s in sequences]
        target_in = np.array([(START,) + s[:-1] for _, s in pairs], "int32")
        log_probs = log_softmax(peaked_model((SOURCES[[row for row, _ in pairs]], target_in)))
        for i, (row, s) in enumerate(pairs):
            scores[row][s] = float(sum(log_probs[i, t, token] for t, token in enumerate(s)))
    return scores


def complete_sequences(cap):
    """Every output the decoder can give under a cap: ends at the end token, or at the cap."""
    out = []
    for length in range(1, cap + 1):
        for body in itertools.product([a for a in ALPHABET if a != END], repeat=length - 1):
            out.append(body + (END,))
            if length == cap:
                out.extend(body + (a,) for a in ALPHABET if a != END)
    return out


def reference_beam(score, width, cap, alpha):
    """Beam search written from its description, on brute-force scores.

    Every live hypothesis is extended by every token; a finished one (end token, or
    `cap` tokens) is carried over unchanged at no cost and competes for the `width`
    places like the others (so a finished hypothesis can be pushed out); all
    candidates are ranked by log P / penalty(length) and the best `width` are kept.
    Returns the final beam, best first: [(sequence, rank)].
    """
    beam = [()]
    for _ in range(cap):
        candidates = []
        for seq in beam:
            if seq and (seq[-1] == END or len(seq) == cap):
                candidates.append(seq)
            else:
                candidates.extend(seq + (token,) for token in ALPHABET)
        ranked = sorted(candidates, key=lambda s: -score[s] / gnmt_penalty(len(s), alpha))
        beam = ranked[:width]
        if all(s[-1] == END or len(s) == cap for s in beam):
            break
    return [(s, score[s] / gnmt_penalty(len(s), alpha)) for s in beam]


def decoded(ids):
    return [tuple(int(t) for t in row if t) for row in ids]


def test_beam_search_equals_brute_force_reference_for_every_width(peaked_model,
                                                                  sequence_scores):
    """Beam width K returns the best of the K hypotheses the reference keeps, for
    K = 1..5, caps 1..3, alpha 0, 0.6 and 2, eight sentences in one batch; with an
    exhaustive beam (cap <= 2, K = 5) the K kept are the K best of all complete
    sequences, in order, and the answer is the best output of all. (The decoder returns
    one sequence per sentence, so the order of the K is checked on the reference.)

    Mutations that fail here (tried, decoding.py): final choice by raw score
    (`tf.argmax(scores, ...)` instead of `scores / penalty(lengths)`); pruning by raw score
    (`ranked = total`); a finished hypothesis's length still counted up
    (`new_lengths = lengths + 1`); states gathered without the sentence offsets
    (`flat_parent = tf.reshape(parent, [-1])`); the parent taken as `top % k`; the
    exponent ignored (`tf.pow(..., 1.0)`); a finished hypothesis extended by real
    tokens (the `pad_row` line removed).
    """
    checked = differs_from_greedy = differs_by_alpha = 0
    for width in (1, 2, 3, 4, 5):
        for cap in (1, 2, 3):
            for alpha in ALPHAS:
                got = decoded(beam_search_decode(peaked_model, SOURCES, START, END,
                                                 beam_width=width, length_penalty=alpha,
                                                 max_len=cap, max_len_ratio=None))
                for row in range(len(SOURCES)):
                    beam = reference_beam(sequence_scores[row], width, cap, alpha)
                    # the test is only meaningful where the reference's choice is clear
                    if len(beam) > 1:
                        assert beam[0][1] - beam[1][1] > 1e-4, (width, cap, alpha, row)
                    assert got[row] == beam[0][0], (width, cap, alpha, row, beam)
                    checked += 1
                    greedy = reference_beam(sequence_scores[row], 1, cap, alpha)[0][0]
                    differs_from_greedy += got[row] != greedy
                    plain = reference_beam(sequence_scores[row], width, cap, 0.0)[0][0]
                    differs_by_alpha += got[row] != plain
                    if cap <= 2 and width == len(ALPHABET):  # exhaustive: the global best K
                        every = complete_sequences(cap)
                        best = sorted(every, key=lambda s: -sequence_scores[row][s]
                                      / gnmt_penalty(len(s), alpha))[:width]
                        assert [s for s, _ in beam] == best
                        assert got[row] == best[0]
    assert checked == 5 * 3 * 3 * len(SOURCES)
    # the cases are varied: wider beams and the length penalty do change answers here
    assert differs_from_greedy >= 20 and differs_by_alpha >= 10


def test_length_penalty_changes_the_choice_on_a_hand_derived_case(peaked_model):
    """A model whose next-token distribution is constant: P(end) = 0.30, P(4) = 0.64, and
    0.015 each for ids 0, 1, 2, 5. With x = -ln 0.30 = 1.2040 and y = -ln 0.64 = 0.4463
    and cap 3, the candidates' log P are:

        [end] -x = -1.2040   [4 end] -(x+y) = -1.6503   [4 4 end] -(x+2y) = -2.0966
        [4 4 4] (cap) -3y = -1.3388

    alpha = 0 ranks by log P: [end] wins. alpha = 0.6 divides by (6/6)^.6 = 1,
    (7/6)^.6 = 1.0970 and (8/6)^.6 = 1.1884: [end] -1.2040, [4 end] -1.5044,
    [4 4 end] -1.7643, [4 4 4] -1.1266: [4 4 4] wins. Width 2 keeps [4], [end] after
    step 1 and [4 4], [end] after step 2, so it finds both answers; greedy (width 1)
    always says [4 4 4].

    Mutations that fail here (tried, decoding.py): the penalty dropped from the final
    choice (`tf.argmax(scores, ...)`); the exponent ignored (`tf.pow(..., 1.0)` gives
    [4 4 4] at alpha 0); a finished [end] allowed to grow (`pad_row` not applied); a
    finished hypothesis's length still counted up (`new_lengths = lengths + 1`).
    """
    probs = np.full(VOCAB, 0.015)
    probs[END], probs[4] = 0.30, 0.64
    assert probs.sum() == pytest.approx(1.0)
    x, y = -math.log(0.30), -math.log(0.64)
    by_hand = {(END,): -x, (4, END): -(x + y), (4, 4, END): -(x + 2 * y), (4, 4, 4): -3 * y}
    for alpha, winner in ((0.0, (END,)), (0.6, (4, 4, 4))):
        ranks = {s: v / gnmt_penalty(len(s), alpha) for s, v in by_hand.items()}
        assert max(ranks, key=ranks.get) == winner  # the derivation above
    assert by_hand[(4, 4, 4)] / gnmt_penalty(3, 0.6) == pytest.approx(-1.1266, abs=1e-4)

    # the same model (its compiled decoders are reused) with a constant output layer
    projection = peaked_model.output_projection
    saved = [v.numpy() for v in (projection.kernel, projection.bias)]
    try:
        projection.kernel.assign(np.zeros(saved[0].shape, "float32"))
        projection.bias.assign(np.log(probs).astype("float32"))

        def beam(width, alpha):
            return decoded(beam_search_decode(peaked_model, SOURCES, START, END,
                                              beam_width=width, length_penalty=alpha,
                                              max_len=3, max_len_ratio=None))

        assert beam(2, 0.0) == [(END,)] * len(SOURCES)
        assert beam(2, 0.6) == [(4, 4, 4)] * len(SOURCES)
        assert beam(1, 0.0) == beam(1, 0.6) == [(4, 4, 4)] * len(SOURCES)
    finally:
        projection.kernel.assign(saved[0])
        projection.bias.assign(saved[1])


# --------------------------------------------------------------------------- sampling

LM_VOCAB = 7
DRAWS = 6000


@pytest.fixture(scope="module")
def language_model():
    """A tiny LSTM language model with every weight drawn from N(0, 1): next-token
    distributions that are spread out and depend on the history."""
    keras.utils.set_random_seed(3)
    model = LanguageModel(LM_VOCAB, embedding_dim=5, units=8)
    model(np.ones((1, 2), "int32"))
    rng = np.random.default_rng(3)
    for weight in model.weights:
        weight.assign(rng.normal(0.0, 1.0, weight.shape).astype("float32"))
    return model


def next_distribution(model, prefix, temperature):
    """softmax(logits / T) over ids >= 1 after `prefix`, in float64 (padding never drawn)."""
    logits = np.asarray(model(np.array([prefix], "int32")), "float64")[0, -1]
    scaled = logits[1:] / temperature
    p = np.exp(scaled - scaled.max())
    return np.concatenate([[0.0], p / p.sum()])


def chi_square_p(counts, expected_probs):
    """Pearson's chi-square goodness-of-fit p-value (categories with probability > 0)."""
    from scipy.stats import chi2

    counts = np.asarray(counts, "float64")
    keep = expected_probs > 0
    assert counts[~keep].sum() == 0
    expected = expected_probs[keep] * counts.sum()
    stat = float(((counts[keep] - expected) ** 2 / expected).sum())
    return float(chi2.sf(stat, keep.sum() - 1))


@pytest.mark.parametrize("temperature", [0.5, 2.0])
def test_sampling_follows_softmax_of_logits_over_temperature(language_model, temperature):
    """6000 seeded draws (one per batch row) of the first and second generated token fit
    softmax(logits / T) by chi-square (p > 1e-3, two seeds); the same counts reject the
    T = 1 distribution (p < 1e-6), so the test can tell the temperature.

    Mutations that fail here (tried, generation.py): `logits * temperature`; the
    temperature ignored (`logits` alone); padding not masked (`mask_padding` returning
    its input); every step drawn with the same seed (`seed=tf.stack([seed, 0])` — the
    second token then repeats the first draw's uniform and its conditional law breaks).
    """
    prefix = [2, 5, 3]
    rows = np.tile(np.array(prefix, "int32"), (DRAWS, 1))
    first = next_distribution(language_model, prefix, temperature)
    plain = next_distribution(language_model, prefix, 1.0)
    for seed in (11, 12):
        tokens = generate(language_model, rows, 2, temperature=temperature, seed=seed)
        counts = np.bincount(tokens[:, 0], minlength=LM_VOCAB)
        assert chi_square_p(counts, first) > 1e-3, (counts, first * DRAWS)
        assert chi_square_p(counts, plain) < 1e-6
        # the second token, given the first: the two most frequent first tokens
        for token in np.argsort(-counts)[:2]:
            chosen = tokens[tokens[:, 0] == token, 1]
            second = next_distribution(language_model, prefix + [int(token)], temperature)
            counts2 = np.bincount(chosen, minlength=LM_VOCAB)
            assert chi_square_p(counts2, second) > 1e-3, (token, counts2, second * len(chosen))


def test_temperature_towards_zero_is_greedy(language_model):
    """At T = 1e-4 every sampled token is the argmax: 20 tokens after each of six
    prefixes equal greedy decoding (T = 0), for two seeds.

    Mutation that fails here (tried, generation.py): `logits * temperature` (T → 0 then
    samples uniformly).
    """
    prefixes = np.array([[2, 5, 3], [1, 1, 4], [6, 2, 2], [3, 3, 3], [5, 4, 6], [4, 1, 2]],
                        "int32")
    greedy = generate(language_model, prefixes, 20, temperature=0.0)
    assert len({tuple(r) for r in greedy}) >= 3
    for prefix, row in zip(prefixes, greedy):  # no near-tie on the greedy paths
        path = np.concatenate([prefix, row])[None, :-1]
        logits = np.sort(np.asarray(language_model(path), "float64")[0, 2:, 1:], axis=-1)
        assert (logits[:, -1] - logits[:, -2]).min() > 1e-2
    for seed in (0, 1):
        np.testing.assert_array_equal(
            generate(language_model, prefixes, 20, temperature=1e-4, seed=seed), greedy)
