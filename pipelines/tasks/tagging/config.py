"""The tagging task's configuration (no TensorFlow import)."""

import dataclasses
import typing

from elman.config import EncoderConfig, TrainConfig


@dataclasses.dataclass(frozen=True)
class TaggingDataConfig:
    """Where the tagged sentences come from and how to read them."""

    train: str = ""  # file, a folder written by datasets' save_to_disk, or hub:NAME
    validation: str = ""  # same kinds; empty: carve `validation_fraction` off train
    test: str = ""  # same kinds; empty: no test split (the report uses validation)
    format: str = "auto"  # auto (extension; a folder is hf), conll, conllu, jsonl, parquet, hf
    tag_column: str = ""  # conll: tag column index (default -1, the last); jsonl/hf: tags key
    tokens_column: str = "tokens"  # jsonl/hf: the key or column holding the token list
    # (jsonl with neither key set: tokens/words/text/chars and tags/ner_tags/labels/label
    # are tried, so `{"text": [...], "label": [...]}` files read as they are)
    tag_names: tuple[str, ...] = ()  # jsonl/parquet/hf tags written as integer ids with no
    # names in the file (a `to_json` export): the names in id order, ["O", "B-PER", ...]
    encoding: str = "utf-8"  # the files' text encoding (gb18030 for GBK releases of Chinese
    # corpora); JSON-lines, CoNLL and CoNLL-U files
    conllu_field: str = "upos"  # CoNLL-U: upos or xpos
    scheme: str = "auto"  # auto (guessed), BIO, IOB1, BIOS, BIOES, BMES, IO (bare types, as
    # Few-NERD), none (free tags: POS)
    strict: bool = True  # an ill-formed sequence (I-X after O) is an error
    repair_bio: bool = False  # --repair-bio: read I-X after O as B-X and count it
    validation_fraction: float = 0.1  # share of train held out when no validation is given
    hub_config: str = ""  # configuration name of a hub dataset
    hub_train_split: str = "train"  # split of a dataset dict used for training
    hub_validation_split: str = "validation"  # split used for validation ("" to carve)
    hub_test_split: str = "test"  # split used for testing ("" for none)


@dataclasses.dataclass(frozen=True)
class WordVocabularyConfig:
    """The word vocabulary (built on the training split only)."""

    lowercase: bool = False  # capitalisation matters for NER: keep case by default
    min_count: int = 1  # words seen fewer times in train map to OOV
    max_words: int = 50000  # vocabulary cap, padding and OOV included


@dataclasses.dataclass(frozen=True)
class CharFeaturesConfig:
    """Character-level word features (models.CharWordFeatures)."""

    features: str = "lstm"  # none, lstm (char BiLSTM) or cnn (char CNN + max pooling)
    embedding_dim: int = 25  # char embedding size
    units: int = 25  # char LSTM units per direction, or CNN filters
    max_word_length: int = 20  # chars per word kept (longer words are cut; positions stay)
    lowercase: bool = False  # lower-case before the char lookup


@dataclasses.dataclass(frozen=True)
class TokenFeaturesConfig:
    """Extra per-token features joined to the word embedding (`tagging.features`)."""

    bigrams: bool = False  # embed each token's bigrams (t[i-1], t[i]) and (t[i], t[i+1]):
    # for one-character-per-token corpora (Chinese NER)
    bigram_dim: int = 50  # bigram embedding size (each token gets two: 2 × this)
    bigram_min_count: int = 2  # bigrams seen fewer times in train map to OOV (which then
    # learns a vector for the bigrams validation and test bring)
    max_bigrams: int = 200000  # bigram vocabulary cap, padding and OOV included
    shape: bool = False  # embed each raw token's case/digit class (lower, title, upper,
    # mixed, numeric, has_digit, punct, nocase): for English NER
    shape_dim: int = 5  # shape embedding size


@dataclasses.dataclass(frozen=True)
class TaggingEmbeddingConfig:
    """The word embedding."""

    dim: int = 100  # embedding size (a pretrained file must match it)
    pretrained: str = ""  # word2vec/GloVe text file; empty: random initialisation
    trainable: bool = True  # fine-tune the embedding during training
    word_dropout: float = 0.0  # share of words fed as OOV while training (trains the OOV vector)
    train_vectors: str = "none"  # none, skipgram or cbow: start the embedding from word2vec
    # vectors learned on the training sentences alone (instead of `pretrained`)
    vector_epochs: int = 10  # train_vectors: word2vec passes over the training sentences
    vector_window: int = 5  # train_vectors: context words on each side
    vector_max_tokens: int = 100_000_000  # train_vectors: at most this many words read in
    # all passes together (fewer passes, or a seeded share of the sentences, on a big corpus)
    vector_centre: int = -1  # starting vectors (learned or pretrained): -1 as they are;
    # N >= 0: their mean vector and N leading principal directions removed ("all but the top")
    vector_std: float = 0.0  # starting vectors scaled to this element sd (0: as they are;
    # Keras' random embedding has 0.029)
    adversarial: float = 0.0  # adversarial training: each step also trains on the sentences
    # with each word's joined vector (word, chars, bigrams, shape) moved up the loss
    # gradient by this fraction of the sentence's norm; 0: off


@dataclasses.dataclass(frozen=True)
class TaggingHeadConfig:
    """The output layer."""

    type: str = "crf"  # softmax (independent tags) or crf
    constraint: str = "auto"  # CRF only. auto: the constraints of `tags` for entity tags;
    # BIO or BIOES (must match `tags`); none
    tags: str = "BIO"  # entity tags the model learns and predicts: BIO, or BIOES (an
    # entity's last token E-, a one-token entity S-). Files are read and written in their
    # own scheme either way; predictions are read back to BIO by prefix (E- → I-, S- → B-)
    lm_weight: float = 0.0  # a language-model objective beside tagging (Rei 2017): the
    # forward states also predict the next word, the backward ones the previous word, and
    # this weight times that loss joins the tagging loss while training; 0: off. Needs
    # features.bigrams = false (they show the predicted word); with stacked layers the
    # first layer's states predict (above it each direction has read the whole sentence)
    lm_words: int = 2000  # classes of that prediction: the most frequent words, OOV for
    # the rest, and the sentence's edge
    lm_hidden: int = 50  # tanh units before each direction's softmax


@dataclasses.dataclass(frozen=True)
class TaggingConfig:
    """Everything a tagging run needs."""

    choices: typing.ClassVar[dict] = {  # allowed values of this task's own string settings
        "data.format": ("auto", "conll", "conllu", "jsonl", "parquet", "hf"),
        "data.conllu_field": ("upos", "xpos"),
        "data.scheme": ("auto", "BIO", "IOB2", "IOB1", "BIOS", "BIOES", "IOBES", "BMES", "IO",
                        "none"),
        "chars.features": ("none", "lstm", "cnn"),
        "head.type": ("softmax", "crf"),
        "head.constraint": ("auto", "BIO", "BIOES", "none"),
        "head.tags": ("BIO", "BIOES"),
        "encoder.merge_mode": ("concat",),
    }

    task: str = "tagging"  # the task name
    data: TaggingDataConfig = TaggingDataConfig()
    vocabulary: WordVocabularyConfig = WordVocabularyConfig()
    chars: CharFeaturesConfig = CharFeaturesConfig()
    features: TokenFeaturesConfig = TokenFeaturesConfig()
    embedding: TaggingEmbeddingConfig = TaggingEmbeddingConfig()
    encoder: EncoderConfig = EncoderConfig()
    head: TaggingHeadConfig = TaggingHeadConfig()
    train: TrainConfig = TrainConfig()
