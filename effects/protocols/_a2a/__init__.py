"""A2A: an agent's sessions served as A2A tasks, and a remote A2A agent called as a tool.

Importing it imports the ``a2a-sdk`` package (the ``a2a`` extra).
"""

from ._app import build_app
from ._remote import RemoteAgent

__all__ = ["RemoteAgent", "build_app"]
