"""Text generation and language-model scores for `elman.models.language_model.LanguageModel`.

`generate` runs the prefix through the model once, then feeds one token at a time
while carrying the recurrent state, inside one compiled `tf.function` /
`tf.while_loop`, batched over prefixes of equal length (linear in the generated
length). The naive whole-prefix re-run it must match token for token, and the
benchmark racing the two, live in `elman.bench.reference_generation`.
"""

import math
import random
import weakref

import numpy as np

# Compiled functions per model, so that repeated calls do not retrace.
_COMPILED = weakref.WeakKeyDictionary()


def compiled(model, kind, build):
    """The compiled function `build` makes for `model`, made once per model.

    The function reaches the model through a weak reference, so the cache entry
    goes away with the model.

    Args:
        model: `LanguageModel`.
        kind: str, the cache key ("greedy", "sampled", ...).
        build: callable weakref → compiled function.
    """
    functions = _COMPILED.setdefault(model, {})
    if kind not in functions:
        functions[kind] = build(weakref.ref(model))
    return functions[kind]


def check_prefix(prefix_ids, vocabulary_size):
    """Checks prefixes of ids; returns (int32 array [batch, length], whether it was 1-D).

    Args:
        prefix_ids: int array `[length]` or `[batch, length]`, ids >= 1.
        vocabulary_size: int, the model's number of ids.
    """
    prefix = np.asarray(prefix_ids)
    single = prefix.ndim == 1
    if single:
        prefix = prefix[None, :]
    if prefix.ndim != 2 or not np.issubdtype(prefix.dtype, np.integer) or prefix.size == 0:
        raise ValueError(
            "Expected prefix_ids to be a non-empty int array [length] or [batch, length] "
            f"(prefixes of equal length). Received: shape={prefix.shape}, dtype={prefix.dtype}"
        )
    if (prefix >= vocabulary_size).any():
        raise ValueError(
            f"Expected prefix_ids below the vocabulary size {vocabulary_size}. "
            f"Received: max id {int(prefix.max())}"
        )
    if (prefix <= 0).any():
        raise ValueError(
            "Expected prefix_ids without padding: every id >= 1 (give prefixes of "
            "equal length; generate unequal ones in separate calls)."
        )
    return prefix.astype(np.int32), single


def check_length(length):
    """Checks a number of tokens to generate; returns it as an int."""
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 0:
        raise ValueError(f"Expected length to be an integer >= 0. Received: length={length!r}")
    return int(length)


def mask_padding(logits):
    """Never generate the padding id 0: it would be masked when fed back."""
    import tensorflow as tf

    vocabulary_size = tf.shape(logits)[-1]
    return tf.where(tf.range(vocabulary_size) > 0, logits, tf.constant(-np.inf, logits.dtype))


def _build_generate(model_ref, sample):
    import tensorflow as tf

    @tf.function(
        input_signature=[
            tf.TensorSpec([None, None], tf.int32),
            tf.TensorSpec([], tf.int32),
            tf.TensorSpec([], tf.float32),
            tf.TensorSpec([], tf.int32),
        ],
    )
    def generate_fn(prefix, length, temperature, seed):
        model = model_ref()
        sequence_logits, states = model(prefix, return_states=True, training=False)
        logits = sequence_logits[:, -1, :]

        def pick(logits, i):
            logits = mask_padding(tf.cast(logits, tf.float32))
            if sample:
                return tf.random.stateless_categorical(
                    logits / temperature, 1, seed=tf.stack([seed, i]), dtype=tf.int32
                )[:, 0]
            return tf.argmax(logits, axis=-1, output_type=tf.int32)

        tokens = tf.TensorArray(tf.int32, size=length)

        def body(i, logits, states, tokens):
            token = pick(logits, i)
            tokens = tokens.write(i, token)
            logits, states = model.step(token, states)
            return i + 1, logits, states, tokens

        # The last token needs no step after it: pick it outside the loop.
        i, logits, states, tokens = tf.while_loop(
            lambda i, *_: i < length - 1,
            body,
            (tf.constant(0), logits, states, tokens),
        )
        tokens = tokens.write(i, pick(logits, i))
        return tf.transpose(tokens.stack())

    return generate_fn


def _build_greedy(model_ref):
    return _build_generate(model_ref, sample=False)


def _build_sampled(model_ref):
    return _build_generate(model_ref, sample=True)


def generate(model, prefix_ids, length, temperature=0.0, seed=None):
    """Continue prefixes by `length` tokens, carrying the recurrent state (linear time).

    Runs each prefix once, then one token per step through `model.step`, all
    inside one compiled `tf.while_loop`, batched over the prefixes. Greedy
    (argmax) when `temperature` is 0; otherwise samples from
    `softmax(logits / temperature)` with a stateless RNG seeded by `(seed,
    step)`, so the same seed gives the same tokens. The padding id 0 is never
    generated.

    Args:
        model: `LanguageModel`.
        prefix_ids: int array `[length]` or `[batch, length]`, prefixes of equal
            length without padding (ids >= 1).
        length: int, the number of tokens to generate.
        temperature: float >= 0, 0 for greedy decoding. Default 0.0.
        seed: int or None, the sampling seed; None draws a fresh one. Unused when
            greedy. Default None.

    Returns:
        numpy int32 array `[batch, length]` of generated ids (`[length]` for a
        1-D prefix), prefix not included.

    Example:

    ```python
    tokens = generate(model, [[5, 9, 2], [7, 7, 3]], length=50)
    sampled = generate(model, [5, 9, 2], length=50, temperature=0.8, seed=1)
    ```
    """
    import tensorflow as tf

    prefix, single = check_prefix(prefix_ids, model.vocabulary_size)
    length = check_length(length)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not (
        math.isfinite(temperature) and temperature >= 0
    ):
        raise ValueError(
            "Expected temperature to be a finite number >= 0. "
            f"Received: temperature={temperature!r}"
        )
    if seed is None:
        seed = random.SystemRandom().randrange(2**31 - 1)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"Expected seed to be an int or None. Received: seed={seed!r}")
    if length == 0:
        tokens = np.zeros((prefix.shape[0], 0), dtype=np.int32)
    else:
        if temperature > 0:
            generate_fn = compiled(model, "sampled", _build_sampled)
        else:
            generate_fn = compiled(model, "greedy", _build_greedy)
        tokens = generate_fn(
            tf.constant(prefix),
            tf.constant(length, tf.int32),
            tf.constant(float(temperature), tf.float32),
            tf.constant(int(seed) % (2**31 - 1), tf.int32),
        ).numpy()
    return tokens[0] if single else tokens


def _build_cross_entropy(model_ref):
    import tensorflow as tf

    @tf.function(reduce_retracing=True)
    def batch_cross_entropy(x, y, states):
        logits, new_states = model_ref()(
            x, initial_states=states, return_states=True, training=False
        )
        y = tf.cast(y, tf.int32)
        per_token = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=tf.cast(logits, tf.float32)
        )
        mask = tf.not_equal(y, 0)
        total = tf.reduce_sum(tf.where(mask, tf.cast(per_token, tf.float64), 0.0))
        count = tf.reduce_sum(tf.cast(mask, tf.int64))
        return total, count, new_states

    return batch_cross_entropy


def mean_cross_entropy(model, dataset, carry_states=False):
    """Mean next-token cross-entropy (nats) over the non-padding targets of a dataset.

    Args:
        model: `LanguageModel`.
        dataset: iterable of `(x, y)` batches of int ids `[batch, length]` (a
            `tf.data.Dataset` or a list); targets equal to 0 are padding.
        carry_states: bool, carry the recurrent state from each batch into the
            next, for consecutive chunks from `make_tbptt_dataset`; it starts
            from zeros again whenever the batch size changes. Default False.

    Returns:
        float, the mean cross-entropy in nats.

    Example:

    ```python
    nats = mean_cross_entropy(model, make_tbptt_dataset(ids, 8, 50), carry_states=True)
    ```
    """
    import tensorflow as tf

    batch_cross_entropy = compiled(model, "cross_entropy", _build_cross_entropy)
    total, count, states = 0.0, 0, None
    for batch in dataset:
        if not isinstance(batch, (tuple, list)) or len(batch) != 2:
            raise ValueError("Expected dataset batches of the form (x, y).")
        x, y = (tf.convert_to_tensor(v) for v in batch)
        batch_size = int(x.shape[0])
        if not carry_states or states is None or int(states[0].shape[0]) != batch_size:
            states = model.get_initial_states(batch_size)
        batch_total, batch_count, states = batch_cross_entropy(x, y, states)
        total += float(batch_total)
        count += int(batch_count)
    if count == 0:
        raise ValueError("Expected at least one non-padding target in dataset. Received: none")
    return total / count


def perplexity(model, dataset, carry_states=False):
    """Perplexity: `exp` of the mean next-token cross-entropy over non-padding targets.

    Args:
        model: `LanguageModel`.
        dataset: iterable of `(x, y)` batches, as for `mean_cross_entropy`.
        carry_states: bool, carry the recurrent state across consecutive
            batches. Default False.

    Returns:
        float.

    Example:

    ```python
    ppl = perplexity(model, valid_dataset, carry_states=True)
    ```
    """
    return math.exp(mean_cross_entropy(model, dataset, carry_states=carry_states))


def bits_per_character(model, dataset, carry_states=False):
    """Bits per character: mean cross-entropy in nats divided by ln 2 (character-level models).

    Args:
        model: `LanguageModel`.
        dataset: iterable of `(x, y)` batches, as for `mean_cross_entropy`.
        carry_states: bool, carry the recurrent state across consecutive
            batches. Default False.

    Returns:
        float.

    Example:

    ```python
    bpc = bits_per_character(char_model, valid_dataset, carry_states=True)
    ```
    """
    return mean_cross_entropy(model, dataset, carry_states=carry_states) / math.log(2)
