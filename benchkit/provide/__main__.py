"""`python -m benchkit.provide BACKEND [--portable] [--pack FILE]`: the command is
benchkit.server.provide_command's."""

import sys

from benchkit.server.provide_command import main

sys.exit(main())
