"""``python -m benchmarks``: the speed benchmark (``benchmarks.speed``), as ``make bench`` runs it."""
import sys

from .speed import main

sys.exit(main())
