"""AG-UI: a session's log as an AG-UI event stream, resumable from any position (see :func:`ag_ui_app`).

Importing it imports the ``ag-ui-protocol`` SDK (the ``ag-ui`` extra).
"""

from ._app import build
from ._replay import replayed

__all__ = ["build", "replayed"]
