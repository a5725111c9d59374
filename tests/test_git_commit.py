"""The report's git commit: `+dirty` for a changed tracked file, not for the demo's reports.

The oracle is a repository built in the test with plain git commands: its HEAD is read
back with `git rev-parse`, and which files are changed is set by the test itself.
"""

import shutil
import subprocess

import pytest

from elman.core.report import git_commit

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(root, *args):
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "reports" / "demo").mkdir(parents=True)
    (tmp_path / "reports" / "demo" / "report.md").write_text("# old report\n")
    (tmp_path / "pipelines").mkdir()
    (tmp_path / "pipelines" / "code.py").write_text("x = 1\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "c")
    return tmp_path


def test_a_clean_checkout_is_its_commit(repo):
    assert git_commit(repo) == _git(repo, "rev-parse", "HEAD")


def test_a_rewritten_demo_report_does_not_make_the_checkout_dirty(repo):
    (repo / "reports" / "demo" / "report.md").write_text("# new report\n")
    (repo / "reports" / "index.md").write_text("untracked\n")
    assert git_commit(repo) == _git(repo, "rev-parse", "HEAD")


def test_a_changed_source_file_makes_it_dirty(repo):
    (repo / "pipelines" / "code.py").write_text("x = 2\n")
    (repo / "reports" / "demo" / "report.md").write_text("# new report\n")
    assert git_commit(repo) == _git(repo, "rev-parse", "HEAD") + "+dirty"


def test_outside_a_repository_it_is_unknown(tmp_path):
    assert git_commit(tmp_path).startswith("unknown")
