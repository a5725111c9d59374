import re

import pytest

from elman import config as config_lib
from elman.errors import UserError


def test_defaults_come_from_the_dataclasses_and_preset_overrides_them():
    cfg = config_lib.load_config("sentiment")
    assert cfg.encoder.units == 32  # set by pipelines/configs/sentiment.toml
    assert cfg.encoder.num_layers == config_lib.EncoderConfig().num_layers


def test_set_overrides_are_typed():
    cfg = config_lib.load_config("sentiment", overrides=[
        "encoder.units=7", "encoder.bidirectional=false", "train.learning_rate=0.5",
        "encoder.cell=gru", 'data.text_column="review"'])
    assert cfg.encoder.units == 7 and cfg.encoder.bidirectional is False
    assert cfg.train.learning_rate == 0.5 and cfg.encoder.cell == "gru"
    assert cfg.data.text_column == "review"


@pytest.mark.parametrize("item, needle", [
    ("encoder.unitz=3", "unknown setting 'encoder.unitz'"),
    ("nosuch.key=1", "unknown setting 'nosuch'"),
    ("encoder.units=abc", "'encoder.units' expects a int"),
    ("encoder.cell=lsmt", "must be one of lstm, gru, rnn"),
    ("encoder.units", "expects key=value"),
    ("encoder.units=0", "'encoder.units' must be at least 1; got 0"),
    ("chars.max_word_length=-2", "'chars.max_word_length' must be at least 1; got -2"),
    ("ensemble=0", "'ensemble' must be at least 1; got 0"),
    ("encoder.recurrent_dropout=1", "'encoder.recurrent_dropout' must be in [0, 1); got 1"),
    ("embedding.dropout=-0.1", "'embedding.dropout' must be in [0, 1); got -0.1"),
    ("train.learning_rate=0", "'train.learning_rate' must be positive; got 0"),
    ("pretrain.epochs=-1", "'pretrain.epochs' must be at least 0 (0: no pretraining); got -1"),
    ("pretrain.rate=0", "'pretrain.rate' must be in (0, 1); got 0"),
    ("pretrain.rate=1", "'pretrain.rate' must be in (0, 1); got 1"),
    ("pretrain.dropout=1", "'pretrain.dropout' must be in [0, 1); got 1"),
    ("embedding.adversarial=-0.1", "'embedding.adversarial' must be at least 0 (0: off); got -0.1"),
    ("embedding.virtual_adversarial=-0.2",
     "'embedding.virtual_adversarial' must be at least 0 (0: off); got -0.2"),
    ("head.pooling=min", "head.pooling"),
    ("head.attention_units=0", "'head.attention_units' must be at least 1; got 0"),
])
def test_bad_overrides_are_user_errors(item, needle):
    with pytest.raises(UserError, match=re.escape(needle)):
        config_lib.load_config("sentiment", overrides=[item])


def test_pretraining_is_off_by_default_and_zero_epochs_is_allowed():
    assert config_lib.load_config("sentiment").pretrain.epochs == 0
    assert config_lib.load_config("sentiment", overrides=["pretrain.epochs=0"]).pretrain.epochs == 0


def test_toml_round_trip(tmp_path):
    cfg = config_lib.load_config("sentiment", overrides=["encoder.units=5"])
    path = tmp_path / "c.toml"
    path.write_text(config_lib.dumps_toml(cfg))
    again = config_lib.load_config("sentiment", config_file=path)
    assert again == cfg


def test_config_file_errors(tmp_path):
    with pytest.raises(UserError, match="config file not found"):
        config_lib.load_config("sentiment", config_file=tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[encoder\nunits = 3")
    with pytest.raises(UserError, match="not valid TOML"):
        config_lib.load_config("sentiment", config_file=bad)


def test_data_flag_drops_the_presets_validation_and_test_files():
    from elman import api

    cfg = api.build_config("sentiment", data="mine.csv")
    assert (cfg.data.train, cfg.data.validation, cfg.data.test) == ("mine.csv", "", "")
    cfg = api.build_config("sentiment", data="a.csv", test="b.csv")
    assert (cfg.data.validation, cfg.data.test) == ("", "b.csv")
    assert config_lib.load_config("sentiment").data.test.endswith("en/test.csv")


@pytest.mark.parametrize("task, item", [("tagging", "chars.units=0"),
                                        ("translation", "model.dropout=1.5"),
                                        ("lm", "train.eval_batch_size=0")])
def test_range_rules_cover_every_task(task, item):
    with pytest.raises(UserError, match=re.escape(f"'{item.split('=')[0]}' must be")):
        config_lib.load_config(task, overrides=[item])
