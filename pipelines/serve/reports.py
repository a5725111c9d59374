"""The reports the server shows: the runs' list and file paths that never leave the folder.

`list_reports` gives the rows of `reports/index.md` (read from each report's
metrics.json, as `elman.core.report.update_index` does) plus any other report.html
(the textbook's). `safe_path` turns a URL path into a file under the reports folder
and refuses `..`, absolute paths, encoded slashes or dots, and symlinks that point
out of the folder.
"""

import json
import re
from pathlib import Path

from elman.serve.request import RequestError

_ENCODED = re.compile(r"%(2f|5c|2e|00)", re.IGNORECASE)


def list_reports(root):
    """Every report under `root`, newest first.

    Args:
        root: str or Path, the reports folder.

    Returns:
        list of dicts {"finished", "task", "run", "split", "main_metric", "value",
        "path" (report.html relative to root, "/"-separated)}.
    """
    root = Path(root)
    if not root.is_dir():
        return []
    rows, seen = [], set()
    for path in sorted(root.glob("*/*/metrics.json")):
        try:
            metrics = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        if not isinstance(metrics, dict) or not (path.parent / "report.html").is_file():
            continue
        main = metrics.get("main_metric", "")
        value = (metrics.get("scores") or {}).get(main)
        rel = path.parent.relative_to(root).as_posix()
        seen.add(rel)
        rows.append({"finished": str(metrics.get("finished", "")),
                     "task": metrics.get("task", path.parent.parent.name),
                     "run": path.parent.name, "split": metrics.get("split", ""),
                     "main_metric": main, "value": value, "path": rel + "/report.html"})
    for html in sorted(list(root.glob("*/report.html")) + list(root.glob("*/*/report.html"))):
        rel = html.parent.relative_to(root).as_posix()
        if rel not in seen:
            rows.append({"finished": "", "task": rel.split("/")[0], "run": html.parent.name,
                         "split": "", "main_metric": "", "value": None,
                         "path": rel + "/report.html"})
    rows.sort(key=lambda r: r["finished"], reverse=True)
    return rows


def safe_path(root, rel, raw_path=""):
    """The file under `root` that the URL path `rel` names.

    Args:
        root: str or Path, the reports folder.
        rel: str, the decoded path after `/reports/`.
        raw_path: str, the request's path as sent (still percent-encoded).

    Raises:
        RequestError: 403 for a path that tries to leave the folder (`..`, an absolute
            path, a backslash, an encoded slash or dot, a symlink pointing out), 404 for
            a file that is not there.
    """
    outside = RequestError(403, "that path is outside the reports folder")
    if _ENCODED.search(raw_path) or "\x00" in rel or "\\" in rel:
        raise outside
    parts = rel.split("/")
    if rel.startswith("/") or any(part in ("..", ".") for part in parts) or (
            parts and re.fullmatch(r"[A-Za-z]:", parts[0])):
        raise outside
    root = Path(root).resolve()
    candidate = (root / rel).resolve()
    if not candidate.is_relative_to(root):
        raise outside
    if not candidate.is_file():
        raise RequestError(404, f"no report file '{rel[:80]}'")
    return candidate
