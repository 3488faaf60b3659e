"""``python -m unveil``: the command line."""

from .cli import main

raise SystemExit(main())
