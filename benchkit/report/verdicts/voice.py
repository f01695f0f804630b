"""Whether the verdicts' words are written for a report or for a post.

A report's verdict sentence carries its own provisos: it ends in "(Provisional: why)", names
every range's basis in full and explains a cold start wherever one is left out, so any
section read alone says everything. A post says each of those once: its reasons in one list
under the answer (writeup.unsettled), a rule the first time it applies. The sentences ask
`in_post` rather than taking a flag through every function between the view and the words;
the post's render sets it for its length (`post`), as lang/ko.py sets the study's unit word.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# The explanations already given in the post being written (None: a report is being written).
_SAID: ContextVar[set[str] | None] = ContextVar("benchkit_post_said", default=None)


@contextmanager
def post() -> Iterator[None]:
    """Within the block, the verdicts' words are a post's."""
    token = _SAID.set(set())
    try:
        yield
    finally:
        _SAID.reset(token)


def in_post() -> bool:
    """Whether a post is being written."""
    return _SAID.get() is not None


def first_time(key: str) -> bool:
    """Whether the explanation `key` is to be given here: always in a report; in a post only
    the first time it is asked for, so a rule is explained once however often it applies."""
    said = _SAID.get()
    if said is None:
        return True
    if key in said:
        return False
    said.add(key)
    return True
