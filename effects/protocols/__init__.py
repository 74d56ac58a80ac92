"""The ecosystem's protocols over agent-core sessions: AG-UI, A2A and MCP.

Each protocol needs its extra (``pip install 'agent-core[ag-ui]'``, ``[a2a]``,
``[mcp]``); its SDK is imported when an app is built. The apps serve the
sessions of a :class:`SessionHost` (an agent run in this process) or of
:class:`StoredSessions` (a store whose sessions a worker runs), read
everything they send from the log, refuse requests to a non-loopback host and
cross-origin writes unless told otherwise, and take an ``authenticate`` hook:
a callable given the request, true to let it in (:class:`Unauthorized` to
refuse with a message of its own).
"""

from ._apps import DEFAULT_WAIT_SECONDS, a2a_app, ag_ui_app, ag_ui_events, mcp_app, mcp_server, remote_agent
from ._host import DEFAULT_MAX_SESSIONS, SessionHost
from ._security import Authenticate, Unauthorized, loopback_host
from ._sessions import Refused, Sessions, StoredSessions

__all__ = [
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_WAIT_SECONDS",
    "Authenticate",
    "Refused",
    "SessionHost",
    "Sessions",
    "StoredSessions",
    "Unauthorized",
    "a2a_app",
    "ag_ui_app",
    "ag_ui_events",
    "loopback_host",
    "mcp_app",
    "mcp_server",
    "remote_agent",
]
