"""`python -m benchkit [overrides]`: one job; `-m` for a sweep."""

from benchkit.app import main

main()
