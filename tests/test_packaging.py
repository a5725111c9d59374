"""The wheel installs one import name, `elman`, and its API trains and predicts.

Builds the wheel from a copy of the source tree, installs it (without dependencies)
into a fresh virtual environment that borrows this environment's third-party
packages, and runs the public API from outside the source tree.
"""

import shutil
import subprocess
import sys
import sysconfig
import textwrap
import venv

import pytest

from tests.conftest import ROOT

SKIP = shutil.ignore_patterns(".git", ".venv", "runs", "reports", "build", "*.egg-info",
                              "__pycache__", ".pytest_cache", "tests", "docs")

CHECK = textwrap.dedent("""
    import importlib.util, json, sys
    import elman
    assert "site-packages" in elman.__file__, elman.__file__
    for name in ("models", "pipelines"):
        assert importlib.util.find_spec(name) is None, name + " is importable"
    data = sys.argv[1]
    run = elman.train("sentiment", data=data + "/train.csv",
                      validation=data + "/validation.csv", test=data + "/test.csv",
                      out=sys.argv[2], reports=sys.argv[3],
                      overrides={"train.epochs": 1, "encoder.units": 8, "embedding.dim": 8})
    predictor = elman.load(run.path)
    out = predictor.predict(["a lovely warm place"])
    print(json.dumps({"accuracy": run.scores["accuracy"], "prediction": out,
                      "presets": elman.presets("sentiment")}))
    try:
        elman.load(sys.argv[3])
    except elman.UserError as err:
        print("USERERROR", err)
""")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=SKIP)
    dist = tmp / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w",
                    str(dist), str(src)], check=True, timeout=600)
    wheels = list(dist.glob("elman-*.whl"))
    assert len(wheels) == 1
    env_dir = tmp / "env"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-index", str(wheels[0])], check=True, timeout=600)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig."
                           "get_paths()['purelib'])"], capture_output=True, text=True,
                          check=True).stdout.strip()
    # third-party packages (TensorFlow, ...) come from this environment, appended after
    # the new environment's own site-packages; this environment's editable elman is not
    # activated (its .pth files are not read from an appended folder)
    deps = sysconfig.get_paths()["purelib"]
    with open(f"{site}/zz_deps.pth", "w", encoding="utf-8") as handle:
        handle.write(deps + "\n")
    return tmp, python, wheels[0]


def test_the_wheel_holds_only_the_elman_package(installed):
    import zipfile

    _, _, wheel = installed
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert tops == {"elman", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}
    names = zipfile.ZipFile(wheel).namelist()
    assert "elman/models/crf.py" in names and "elman/configs/sentiment.toml" in names


@pytest.mark.slow
def test_installed_api_trains_and_predicts_outside_the_source_tree(installed, tiny_sentiment):
    import json

    tmp, python, _ = installed
    data = tiny_sentiment["train"].parent
    done = subprocess.run([str(python), "-c", CHECK, str(data), str(tmp / "run"),
                           str(tmp / "reports")], cwd=tmp, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    result = json.loads(lines[-2])
    assert 0.0 <= result["accuracy"] <= 1.0
    assert result["prediction"][0]["label"] in ("positive", "negative")
    assert set(result["prediction"][0]["probabilities"]) == {"positive", "negative"}
    assert "default" in result["presets"] and "sst2" in result["presets"]
    assert lines[-1].startswith("USERERROR ") and "run.json" in lines[-1]
