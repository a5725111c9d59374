"""Shared (de)serialization for elman's models."""

import keras


class EmbeddingInitializerConfig:
    """Mixin: `from_config` rebuilds the serialized `embeddings_initializer` argument."""

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["embeddings_initializer"] = keras.initializers.deserialize(
            config["embeddings_initializer"])
        return cls(**config)
