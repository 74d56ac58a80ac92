"""Context compaction: the policy a session declares, what the state records of it, and the decisions.

Its modules are imported directly (``_policy`` is a leaf the configuration
imports; the decisions need the state and ``llm_context``).
"""
