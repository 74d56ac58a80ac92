"""``python -m benchmarks.peers``: see ``--help``."""

from benchmarks.peers.run import main

main()
