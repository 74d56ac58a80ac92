"""A2A: an agent's sessions served as A2A tasks, and a remote A2A agent called as a tool."""
