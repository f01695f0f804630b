"""The machine a job runs on: the devices it is given, what the machine and benchkit were, and
child processes that die with their parent."""
