"""The adversarial step's cost (issue 20), measured side by side in one process.

    python -m elman.bench.adversarial_cost [--preset default] [--rounds 12] [--epsilon 0.1]

One sentiment model of a preset (the toy English reviews by default) trained four
ways from the same weights on the same batches: plain; with adversarial training as
`SentimentClassifier.train_step` runs it (two backward passes: one tape over the clean
loss gives the word-vector gradient and the clean weight gradient together, one more
for the perturbed loss); the earlier three-pass step (a reference kept here only to
be raced against); and virtual adversarial training alone (the same ε; three backward
passes: the clean loss, the power iteration's probe, the moved prediction).
Rounds alternate between the four, one epoch each, in a rotating
order, so a change in the machine's load hits every variant alike; each rate is the
steady state of an epoch (its first batch left out). Reported: the median rate of each
variant over the rounds, its cost (plain rate / its rate) and the median of the
per-round costs. No test asserts a time.
"""

import argparse
import dataclasses
import json
import statistics
import sys


def _three_pass_class():
    """SentimentClassifier with the earlier adversarial step: the clean part of the graph
    is differentiated twice (once for the word vectors, once inside the total loss)."""
    import keras
    import tensorflow as tf

    from elman.models.adversarial import adversarial_direction
    from elman.models.sentiment_classifier import SentimentClassifier

    class ThreePassReference(SentimentClassifier):
        def train_step(self, data):
            x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
            noise = self.get_layer("adversarial")
            with tf.GradientTape(persistent=True) as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(x, y, y_pred, sample_weight, training=True)
                vectors, mask = noise.seen()
                with tape.stop_recording():
                    gradient = tape.gradient(self.optimizer.scale_loss(loss), vectors)
                with noise.perturbed(adversarial_direction(vectors, gradient, mask,
                                                           self.adversarial)):
                    moved = self(x, training=True)
                total = self.optimizer.scale_loss(
                    loss + self.compute_loss(x, y, moved, sample_weight, training=True))
            weights = self.trainable_weights
            gradients = tape.gradient(total, weights)
            del tape
            self.optimizer.apply_gradients(zip(gradients, weights))
            replicas = tf.distribute.get_strategy().num_replicas_in_sync
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss * replicas, sample_weight=tf.shape(y)[0])
            return self.compute_metrics(x, y, y_pred, sample_weight)

    return ThreePassReference


def _models(cfg, vocabulary_size, num_classes, epsilon):
    """{variant: compiled model} (same architecture; the caller sets the weights)."""
    import keras

    from elman.tasks.sentiment.model import classifier_from_config

    plain = classifier_from_config(cfg, vocabulary_size, num_classes, name="plain")
    adv_cfg = dataclasses.replace(cfg, embedding=dataclasses.replace(
        cfg.embedding, adversarial=epsilon))
    two = classifier_from_config(adv_cfg, vocabulary_size, num_classes, name="two_pass")
    three = _three_pass_class().from_config({**two.get_config(), "name": "three_pass"})
    vat_cfg = dataclasses.replace(cfg, embedding=dataclasses.replace(
        cfg.embedding, virtual_adversarial=epsilon))
    virtual = classifier_from_config(vat_cfg, vocabulary_size, num_classes, name="virtual")
    models = {"plain": plain, "adversarial, 2 backward passes": two,
              "adversarial, 3 backward passes (earlier step)": three,
              "virtual adversarial, 3 backward passes": virtual}
    for model in models.values():
        model.compile(optimizer=keras.optimizers.Adam(
            cfg.train.learning_rate, global_clipnorm=cfg.train.clipnorm or None),
            loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return models


def measure(preset="default", rounds=12, epsilon=0.1, log=print):
    """Median steady-state training tokens/s of each variant and the cost ratios."""
    import keras
    import tensorflow as tf

    from elman.bench.suite import _encode, load_sentiment
    from elman.bench.timing import batch_clock, machine_facts, steady_rate, warm_up_plan
    from elman.core.batching import dataset_from_plan, plan_epoch
    from elman.core.data import labels as labels_of
    from elman.core.data import texts as texts_of
    from elman.text.tokenize import fit_vocabulary

    cfg, splits = load_sentiment(preset)
    if splits is None:
        raise SystemExit(f"the data of preset {preset!r} is not here")
    keras.utils.set_random_seed(cfg.train.seed)
    texts = texts_of(splits["train"])
    tokenizer = fit_vocabulary(cfg.tokenizer, texts)
    ids, lengths = _encode(tokenizer, texts)
    names = sorted(set(labels_of(splits["train"])))
    y = tf.constant([names.index(v) for v in labels_of(splits["train"])], tf.int32)
    models = _models(cfg, tokenizer.vocabulary_size, len(names), epsilon)
    start = next(iter(models.values())).get_weights()
    batch = cfg.train.batch_size
    for model in models.values():
        model.set_weights(start)
        model.fit(dataset_from_plan(ids, y, warm_up_plan(lengths, batch)), verbose=0,
                  shuffle=False)
    rates = {name: [] for name in models}
    for r in range(rounds):
        plan = plan_epoch(lengths, batch, cfg.train.seed, r)
        tokens = [int(lengths[b].sum()) for b in plan]
        names = list(models)
        turn = r % len(names)
        for name in names[turn:] + names[:turn]:  # each variant goes first in turn
            model, clock = models[name], batch_clock()
            model.fit(dataset_from_plan(ids, y, plan), epochs=1, verbose=0,
                      callbacks=[clock], shuffle=False)
            rates[name].append(steady_rate(clock, tokens))
        log(f"round {r + 1}/{rounds}: " + ", ".join(
            f"{n} {v[-1]:,.0f}" for n, v in rates.items()))
    median = {name: statistics.median(v) for name, v in rates.items()}
    plain = median["plain"]
    return {"preset": preset, "epsilon": epsilon, "batch_size": batch, "rounds": rounds,
            "steps_per_variant": rounds * (len(plan) - 1), "mean_tokens": float(lengths.mean()),
            "machine": machine_facts(),
            "tokens_per_s": median, "rounds_tokens_per_s": rates,
            "cost_vs_plain": {name: plain / rate for name, rate in median.items()},
            # the same round's rates paired: a change of load between rounds cancels
            "cost_vs_plain_paired": {name: statistics.median(
                p / v for p, v in zip(rates["plain"], values)) for name, values in rates.items()}}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="default", help="sentiment preset (data, model)")
    parser.add_argument("--rounds", type=int, default=12, help="epochs timed per variant")
    parser.add_argument("--epsilon", type=float, default=0.1, help="adversarial step size")
    parser.add_argument("--json", help="also write the result to this file")
    args = parser.parse_args(argv)
    result = measure(args.preset, args.rounds, args.epsilon, log=print)
    m = result["machine"]
    print(f"\n{m['cpu_model']}, {m['cpu_cores_usable']} cores usable, load "
          f"{m['load_average_at_start']}, {m['device']}, TensorFlow {m['tensorflow']}")
    print(f"preset {result['preset']}, batch {result['batch_size']}, "
          f"{result['steps_per_variant']} timed steps per variant, "
          f"mean {result['mean_tokens']:.1f} tokens a sentence")
    for name, rate in result["tokens_per_s"].items():
        print(f"  {name:48s} {rate:10,.0f} tokens/s   cost {result['cost_vs_plain'][name]:.2f}× "
              f"(median of the rounds' ratios {result['cost_vs_plain_paired'][name]:.2f}×)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
