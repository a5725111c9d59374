"""Shared (de)serialization for elman's models."""

import weakref

import keras

_SOURCE_LAYERS = weakref.WeakKeyDictionary()  # Bidirectional wrapper -> the layer it copied


class EmbeddingInitializerConfig:
    """Mixin: `from_config` rebuilds the serialized `embeddings_initializer` argument."""

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["embeddings_initializer"] = keras.initializers.deserialize(
            config["embeddings_initializer"])
        return cls(**config)


def wrap_bidirectional(layer, **kwargs):
    """`keras.layers.Bidirectional(layer, **kwargs)`, safe to call while Keras loads a model.

    Bidirectional serializes `layer` to make its forward and backward copies and then
    drops it. While `keras.saving.load_model` runs, every serialized object is recorded
    by `id()`; once a dropped layer's id is reused by the next one, Keras takes the two
    for one shared object and hands back the wrong copy ("Forward layer and backward
    layer should have different `go_backwards` value"). A model with ten or more
    bidirectional encoders built in constructors (a sentiment ensemble) then failed to
    load. Keeping `layer` alive as long as the wrapper keeps every id distinct.
    """
    wrapper = keras.layers.Bidirectional(layer, **kwargs)
    _SOURCE_LAYERS[wrapper] = layer  # not an attribute: Keras' saving would walk it
    return wrapper
