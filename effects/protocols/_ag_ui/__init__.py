"""AG-UI: a session's log as an AG-UI event stream, resumable from any position (see :func:`ag_ui_app`)."""
