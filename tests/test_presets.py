"""Every preset in pipelines/configs/ is parsed and validated, without reading its data.

The oracle is the TOML file itself, read here with `tomllib`: each setting it names must
come out of `elman.config.load_config(task, path)` with the file's value, the task's own
cross-setting rules (`Task.check`) must accept the config, and `elman.presets(task)` must
list it. Data files under the project's data/ must exist; files under ../shared/data are
only named, never opened (the suite must not depend on them).
"""

import tomllib
from pathlib import Path

import pytest

from elman import api, config as config_lib, tasks
from tests.conftest import ROOT

CONFIGS = ROOT / "pipelines" / "configs"
PRESET_FILES = sorted(CONFIGS.glob("*.toml"))
DATA_KEYS = ("train", "validation", "test")


def settings(values, prefix=""):
    """The TOML's settings as flat (dotted key, value) pairs (`task` and `preset` excluded)."""
    for key, value in values.items():
        if not prefix and key in ("task", "preset"):
            continue
        if isinstance(value, dict):
            yield from settings(value, f"{prefix}{key}.")
        else:
            yield prefix + key, value


def lookup(cfg, dotted):
    for part in dotted.split("."):
        cfg = getattr(cfg, part)
    return cfg


def preset_name(path, task):
    return "default" if path.stem == task else path.stem[len(task) + 1:]


def test_every_preset_file_is_covered():
    """Eleven presets today, the five task defaults among them."""
    names = [p.stem for p in PRESET_FILES]
    assert len(names) >= 11
    for task in ("sentiment", "tagging", "translation", "lm"):
        assert task in names


@pytest.mark.parametrize("path", PRESET_FILES, ids=[p.stem for p in PRESET_FILES])
def test_preset_parses_validates_and_keeps_every_setting(path):
    """Mutations that fail here (tried): `load_config` ignoring its `config_file`
    (`source = preset_path(task)`, config.py); float settings read as ints
    (`return float(value)` → `int(value)` in `_coerce`, config.py); the tagging task's
    `check` turned round (`merge_mode != "concat"` → `== "concat"`, tagging/task.py)."""
    values = tomllib.loads(path.read_text(encoding="utf-8"))
    task = values["task"]
    assert path.stem == task or path.stem.startswith(task + "-")
    cfg = config_lib.load_config(task, path)
    assert isinstance(cfg, tasks.config_class(task))
    tasks.get(task).check(cfg)  # the task's rules that involve more than one setting
    flat = dict(settings(values))
    assert flat, path
    for key, value in flat.items():
        got = lookup(cfg, key)
        if isinstance(value, list):  # a TOML list is kept as a tuple
            assert type(got) is tuple and list(got) == value, (key, got, value)
            continue
        assert got == value and type(got) is type(value) or (
            isinstance(value, int) and type(got) is float and got == value), (key, got, value)
    # the saved form reads back to the same config
    again = config_lib.load_config(task, config_file=None, extra=config_lib.to_dict(cfg))
    assert again == cfg
    assert preset_name(path, task) in api.presets(task)
    # --config NAME finds this file, and so does the file's stem (`sentiment-sst2`)
    assert api.config_file(task, preset_name(path, task)).resolve() == path.resolve()
    assert api.config_file(task, path.stem).resolve() == path.resolve()


def test_an_unknown_preset_names_the_tasks_presets_and_the_task_that_has_it():
    """The error lists what `--config` would have found: the oracle is the folder's
    file names, split here by hand (`tagging-ner-en.toml` → `ner-en`, `tagging.toml` →
    `default`)."""
    for task in ("sentiment", "tagging"):
        with pytest.raises(api.UserError) as caught:
            api.config_file(task, "no-such-preset")
        message = str(caught.value)
        assert "no config file or preset named 'no-such-preset'" in message
        listed = message.split("its presets: ")[1].split(", ")
        expected = ["default" if f.stem == task else f.stem.split("-", 1)[1]
                    for f in PRESET_FILES if f.stem.split("-")[0] == task]
        assert sorted(listed) == sorted(expected) and "default" in listed
        assert "is a preset of" not in message
    # a sentiment preset asked of tagging, by its name or its file's stem
    for value in ("zh-reviews", "sentiment-zh-reviews"):
        with pytest.raises(api.UserError) as caught:
            api.config_file("tagging", value)
        assert f"'{value}' is a preset of sentiment" in str(caught.value)


@pytest.mark.parametrize("path", PRESET_FILES, ids=[p.stem for p in PRESET_FILES])
def test_preset_data_files_exist_in_the_project_or_are_named_in_shared(path):
    """The toy presets' files are part of the project; the big corpora live in
    ../shared/data and are named only (not opened here)."""
    cfg = config_lib.load_config(tomllib.loads(path.read_text(encoding="utf-8"))["task"], path)
    named = [getattr(cfg.data, key) for key in DATA_KEYS if getattr(cfg.data, key, "")]
    assert named
    for name in named:
        if name.startswith("../shared/"):
            assert ".." not in Path(name).parts[1:]  # named only: never read by the tests
        else:
            assert (ROOT / name).is_file(), name
