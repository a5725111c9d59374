"""The one Hugging Face hub loader: fails fast and clearly when the hub is out of reach."""

import os

from elman.errors import UserError


def hub_offline():
    """True when the Hugging Face hub cannot be reached (offline flags or no network)."""
    if os.environ.get("HF_HUB_OFFLINE") == "1" or os.environ.get("HF_DATASETS_OFFLINE") == "1":
        return True
    import socket

    try:
        socket.create_connection(("huggingface.co", 443), timeout=2).close()
        return False
    except OSError:
        return True


def load_hub(name, config="", local_hint="--data train.csv --validation valid.csv"):
    """Loads a hub dataset (a DatasetDict); no retries when offline.

    Args:
        name: str, the dataset name on the hub (or a local dataset script/folder).
        config: str, the configuration name ("" for none).
        local_hint: str, the local-files command line the error message suggests.
    """
    offline = hub_offline()
    if offline:  # before `datasets` is imported: it reads these once, at import
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["HF_DATASETS_OFFLINE"] = "1"
    import datasets

    try:
        return datasets.load_dataset(name, config or None)
    except Exception as err:  # noqa: BLE001 (ConnectionError, DatasetNotFoundError, ...)
        hint = " You are offline and it is not in the local cache." if offline else ""
        raise UserError(f"cannot load hub dataset '{name}': {type(err).__name__}.{hint} Use "
                        f"local files instead: {local_hint}") from None


def hub_parts(loaded, name, wanted):
    """The hub splits a run asked for: yields (our name, hub split, dataset, source).

    Args:
        loaded: the DatasetDict `load_hub` returned.
        name: str, the dataset name (for messages and the source string).
        wanted: dict of our split name → hub split name ("" to skip). A missing train
            split is a UserError; a missing validation or test split is skipped.
    """
    for ours, theirs in wanted.items():
        if not theirs:
            continue
        if theirs not in loaded:
            if ours == "train":
                raise UserError(f"hub dataset '{name}' has no split '{theirs}'; "
                                f"it has {', '.join(loaded)}")
            continue
        yield ours, theirs, loaded[theirs], f"hub:{name}[{theirs}]"
