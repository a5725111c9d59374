"""A saved tagging run: raw texts (or token lists) in, tags and entities out.

Splitting raw text into words (or Chinese characters) and building the char-id tensor
happen in Python, so no raw-strings-in model is exported for this task: a string-in
graph would have to reproduce `split_raw_text`'s Unicode rules in TensorFlow ops, and
callers who already have tokens would pay for it.
"""

from elman.errors import UserError
from elman.tasks.base import Predictor
from elman.tasks.tagging.model import encode, predict_tag_ids
from elman.tasks.tagging.scoring import to_output
from elman.tasks.tagging.entities import entities_of
from elman.text.splitters import split_raw_text
from elman.tasks.tagging.vocab import Vocabularies


class TaggingPredictor(Predictor):
    """Tags raw texts with a saved tagging run.

    Args:
        run_dir: str or Path, the run folder (model.keras and the vocabulary files).

    Example:
        >>> TaggingPredictor("runs/tagging/demo").predict(["Mary visited Paris"])
        [{'text': 'Mary visited Paris', 'tokens': ['Mary', 'visited', 'Paris'],
          'tags': ['B-PER', 'O', 'B-LOC'], 'entities': [...], 'truncated': None}]
    """

    task = "tagging"

    def __init__(self, run_dir):
        super().__init__(run_dir)
        self.vocab = Vocabularies.load(self.run_dir)

    def tag_internal(self, token_lists, batch_size=256):
        """Tags (BIO for entity tags) of each sentence.

        Args:
            token_lists: list of lists of str.
            batch_size: int, sentences per batch.
        """
        with_chars = self.model.char_features != "none"
        features, _, lengths = encode(self.vocab, token_lists, with_chars)
        ids = predict_tag_ids(self.model, features, lengths, batch_size)
        return [self.vocab.tag_names(row) for row in ids]

    def tag(self, token_lists, batch_size=256):
        """Tags of each sentence in the run's input scheme (BIO, BIOES, ... or free).

        Args:
            token_lists: list of lists of str.
            batch_size: int, sentences per batch.
        """
        return [to_output(tags, self.vocab.scheme)
                for tags in self.tag_internal(token_lists, batch_size)]

    @staticmethod
    def _token_lists(texts):
        token_lists = []
        for i, text in enumerate(texts, start=1):
            tokens = split_raw_text(text)
            if not tokens:
                raise UserError(f"text {i} is empty; expected some text to tag")
            token_lists.append(tokens)
        return token_lists

    def predict(self, texts):
        """One {"text", "tokens", "tags" (the input's scheme), "entities", "truncated"}
        dict per text.

        "truncated" is always None: every word of a text is tagged, however long (only a
        word's char features stop at its first `max_word_length` chars; it keeps its tag).

        Args:
            texts: list of str, raw texts (split with `split_raw_text`).
        """
        token_lists = self._token_lists(texts)
        out = []
        for text, tokens, tags in zip(texts, token_lists, self.tag_internal(token_lists)):
            out.append({"text": text, "tokens": tokens,
                        "tags": to_output(tags, self.vocab.scheme),
                        "entities": entities_of(tokens, tags, text) if self.vocab.entity
                        else [], "truncated": None})
        return out

    def trace(self, texts):
        """Every token's tag probabilities and each predicted entity's probability.

        Softmax head: the softmax; CRF head: the marginals from forward–backward. An
        entity's probability is, for a CRF, the probability of its tags on its span
        (summed over all paths through them), for the softmax head the product of its
        tokens' tag probabilities (see `elman.tasks.tagging.trace`).

        Returns:
            One dict per text: "text", "tokens", "tags" (the input's scheme), "steps"
            (one {"token", "tag", "model_tag" (the tag among the model's: BIO, or BIOES
            with `head.tags = "BIOES"`),
            "probability" of that tag, "probabilities" over the model's tags} per token),
            "entities" (each with its "probability"), "probability_source" and
            "entity_probability" (what the numbers are).
        """
        from elman.tasks.tagging.trace import sentence_trace, tag_trace

        token_lists = self._token_lists(texts)
        features, _, lengths = encode(self.vocab, token_lists,
                                      self.model.char_features != "none")
        out = []
        for text, tokens, entry in zip(texts, token_lists,
                                       tag_trace(self.model, features, lengths)):
            bio = self.vocab.tag_names(entry["tags"])
            entities = entities_of(tokens, bio, text) if self.vocab.entity else []
            out.append(sentence_trace(text, tokens, entry, self.vocab,
                                      to_output(bio, self.vocab.scheme), entities))
        return out

    def format_trace(self, trace):
        """One row per token: its tag, that tag's probability (with a bar) and the two
        next most probable tags; then each entity with its probability."""
        from elman.core.trace import bar, shown, table

        rows = []
        for t, step in enumerate(trace["steps"], start=1):
            others = sorted(step["probabilities"].items(), key=lambda kv: -kv[1])
            others = [f"{name} {p:.3f}" for name, p in others if name != step["model_tag"]][:2]
            rows.append([str(t), shown(step["token"]), step["tag"],
                         f"{step['probability']:.4f}", bar(step["probability"], 10),
                         ", ".join(others)])
        lines = [trace["text"], f"(tag probabilities: {trace['probability_source']})",
                 table(["t", "token", "tag", "p(tag)", "", "next most probable"], rows,
                       right=(0, 3))]
        for entity in trace["entities"]:
            where = (f"token {entity['end']}" if entity["end"] - entity["start"] == 1
                     else f"tokens {entity['start'] + 1}-{entity['end']}")
            lines.append(f"  {entity['type']}\t{entity['text']}\tp = {entity['probability']:.4f}"
                         f"\t({where})")
        if trace["entities"]:
            lines.append(f"(entity probability: {trace['entity_probability']})")
        return "\n".join(lines)

    def format_text(self, prediction):
        """`token/tag ...`, then one `  TYPE<TAB>text<TAB>(tokens i-j)` line per entity."""
        lines = [" ".join(f"{tok}/{tag}"
                          for tok, tag in zip(prediction["tokens"], prediction["tags"]))]
        for entity in prediction["entities"]:
            where = (f"token {entity['end']}" if entity["end"] - entity["start"] == 1
                     else f"tokens {entity['start'] + 1}-{entity['end']}")
            lines.append(f"  {entity['type']}\t{entity['text']}\t({where})")
        if not prediction["entities"] and self.vocab.entity:
            lines.append("  (no entities)")
        return "\n".join(lines)

    def format_conll(self, prediction):
        """`token<TAB>tag` lines and the blank line that ends the sentence (CoNLL)."""
        return "".join(f"{token}\t{tag}\n"
                       for token, tag in zip(prediction["tokens"], prediction["tags"]))
