"""`python -m benchkit.report.lang check|update|compile|init LANG` (lang/catalogs.py)."""

from benchkit.report.lang.catalogs import main

raise SystemExit(main())
