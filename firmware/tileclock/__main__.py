"""`python -m tileclock` is the `tileclock` command."""

from .cli import main

raise SystemExit(main())
