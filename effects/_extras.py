"""Optional dependencies: the error raised when one is missing, naming the extra and the command that installs it.

The command depends on where agent-core came from, as the installer recorded
it (``direct_url.json``, PEP 610): an editable clone gets ``pip install -e
'CLONE[extra]'``, a wheel or a directory installed by path gets that path, a
VCS checkout its URL and commit, and a release from an index
``pip install 'agent-core[extra]'``. It names this interpreter, so it installs
where the import failed.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:
    import importlib.metadata

DISTRIBUTION = "agent-core"


class MissingExtra(ImportError):
    """An optional dependency of agent-core is not installed; the message names the extra that installs it."""


def missing(what: str, extra: str, error: ImportError | None = None) -> MissingExtra:
    """The error for ``what`` (a feature or module) needing ``extra``; ``error`` is the failed import."""
    failed = f" (import failed: {error})" if error is not None else ""
    return MissingExtra(
        f"{what} needs the '{extra}' extra of agent-core, which is not installed{failed}; "
        f"install it with: {install_command(extra)}"
    )


def install_command(extra: str) -> str:
    """The shell command that adds ``extra`` to this interpreter's agent-core, from where it was installed."""
    import importlib.metadata  # only once an extra is missing: it loads the email package

    found = list(importlib.metadata.distributions(name=DISTRIBUTION))
    # An installer records where it took the package from; a source tree's own egg-info (on sys.path when
    # Python runs in the clone) records nothing, so the recorded one is preferred.
    recorded = [d for d in found if d.read_text("direct_url.json")]
    if recorded:
        return _installer(recorded[0]) + _requirement(recorded[0].read_text("direct_url.json"), extra)
    source = Path(__file__).resolve().parents[1]
    if (source / "pyproject.toml").is_file():  # run from a clone without installing it
        return _installer(None) + _editable(source, extra)
    return _installer(found[0] if found else None) + shlex.quote(f"{DISTRIBUTION}[{extra}]")


def _installer(distribution: importlib.metadata.Distribution | None) -> str:
    python = shlex.quote(sys.executable)
    installer = (distribution.read_text("INSTALLER") or "") if distribution is not None else ""
    if installer.strip() == "uv":
        return f"uv pip install --python {python} "
    return f"{python} -m pip install "


def _requirement(direct_url: str | None, extra: str) -> str:
    """The requirement to install: from the index, or the editable clone, directory, file or VCS URL recorded."""
    origin: dict[str, Any] = {}
    if direct_url:
        try:
            origin = json.loads(direct_url)
        except ValueError:
            origin = {}
    url = origin.get("url") if isinstance(origin, dict) else None
    if not isinstance(url, str) or not url:
        return shlex.quote(f"{DISTRIBUTION}[{extra}]")
    local = urlsplit(url).scheme == "file"
    dir_info, vcs = origin.get("dir_info"), origin.get("vcs_info")
    if local and isinstance(dir_info, dict):
        return _editable(Path(unquote(urlsplit(url).path)), extra, editable=bool(dir_info.get("editable")))
    if isinstance(vcs, dict) and vcs.get("vcs"):
        commit = vcs.get("commit_id")
        url = f"{vcs['vcs']}+{url}" + (f"@{commit}" if commit else "")
    return shlex.quote(f"{DISTRIBUTION}[{extra}] @ {url}")


def _editable(path: Path, extra: str, *, editable: bool = True) -> str:
    return ("-e " if editable else "") + shlex.quote(f"{path}[{extra}]")
