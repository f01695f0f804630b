"""`python -m benchkit.provide`: the command is benchkit.server.provide_command's."""
