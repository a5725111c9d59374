import pytest

from pipelines import config as config_lib
from pipelines.errors import UserError


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
])
def test_bad_overrides_are_user_errors(item, needle):
    with pytest.raises(UserError, match=needle.replace("(", r"\(")):
        config_lib.load_config("sentiment", overrides=[item])


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
    from pipelines import cli

    args = cli.build_parser().parse_args(["train", "sentiment", "--data", "mine.csv"])
    cfg = config_lib.load_config("sentiment", extra=cli._data_overrides(args))
    assert (cfg.data.train, cfg.data.validation, cfg.data.test) == ("mine.csv", "", "")
    args = cli.build_parser().parse_args(["train", "sentiment", "--data", "a.csv",
                                          "--test", "b.csv"])
    cfg = config_lib.load_config("sentiment", extra=cli._data_overrides(args))
    assert (cfg.data.validation, cfg.data.test) == ("", "b.csv")
    assert config_lib.load_config("sentiment").data.test.endswith("en/test.csv")
