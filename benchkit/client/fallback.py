"""When a replay cannot take the raw path and goes through httpx, and why.

The raw path (benchkit/client/transport.py) writes its own requests and reads its own
responses; anything it would have to judge the way httpx judges it goes through httpx
instead: an https URL, a proxy httpx would use, credentials or a query in the URL, a header
httpx would refuse or that frames the request, a platform without SO_TIMESTAMPNS, or a
replay asked to take httpx (`replay_client=httpx`, or BENCHKIT_REPLAY_CLIENT=httpx in the
environment when the key is unset). The reason is written in the job's provenance.
"""

from __future__ import annotations

import os
import re
import urllib.request
from collections.abc import Mapping
from typing import Final

import httpx

from benchkit.client import transport

# Headers that frame the request or the connection: this client writes its own, so a caller
# that sets one of them gets httpx, which knows what to do with it.
_FRAMING_HEADERS: Final = frozenset(
    {"content-length", "transfer-encoding", "connection", "upgrade", "expect", "te", "trailer"}
)
_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")

# How the replay may be told which path to take: `replay_client` in the config (the
# Replayer's `client`), else this environment variable; `auto` takes the raw path where it can.
CLIENTS: Final = ("auto", "httpx")
CLIENT_ENV: Final = "BENCHKIT_REPLAY_CLIENT"


def check_client(choice: str | None) -> None:
    """Refuse a `replay_client` that is neither unset, `auto` nor `httpx`."""
    if choice is not None and choice not in CLIENTS:
        raise ValueError(f"replay_client={choice!r}: use 'auto' or 'httpx' (or leave it unset)")


def asked_for_httpx(choice: str | None) -> str | None:
    """Why the replay was asked to take httpx, or None: `choice` (replay_client) when it is
    set, else the environment's BENCHKIT_REPLAY_CLIENT."""
    check_client(choice)
    if choice is None:
        if os.environ.get(CLIENT_ENV, "").strip().lower() == "httpx":
            return f"{CLIENT_ENV}=httpx"
        return None
    return "replay_client=httpx" if choice == "httpx" else None


def fast_path_refusal(
    base_url: str,
    headers: Mapping[str, str],
    client: httpx.AsyncClient,
    choice: str | None = None,
) -> str | None:
    """Why a replay of `base_url` must go through httpx (`client`, as configured for the
    replay; `choice`, the replay_client asked for), or None when the raw path carries it."""
    asked = asked_for_httpx(choice)
    if asked:
        return asked
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL as exc:
        return f"httpx must judge this URL ({exc})"
    if url.scheme != "http":
        return f"a {url.scheme or 'scheme-less'} URL"
    if not url.host:
        return "a URL without a host"
    if url.userinfo:
        return "credentials in the URL"
    if url.query or url.fragment:
        return "a query or fragment in the base URL"
    if _proxied(client, url):
        return "httpx would go through a proxy (from the environment)"
    problem = _header_problem(headers)
    if problem:
        return problem
    return transport.kernel_timestamps_refusal()


def _proxied(client: httpx.AsyncClient, url: httpx.URL) -> bool:
    """Whether httpx would send a request for `url` through a proxy: asked of httpx itself,
    so that HTTP(S)_PROXY, ALL_PROXY and NO_PROXY mean exactly what they mean to httpx."""
    try:
        return client._transport_for_url(url) is not client._transport
    except AttributeError:  # httpx changed inside: assume any proxy setting applies
        return bool(urllib.request.getproxies())


def _header_problem(headers: Mapping[str, str]) -> str | None:
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name):
            return f"a header name httpx must judge ({name!r})"
        if name.lower() in _FRAMING_HEADERS:
            return f"a {name} header set by the caller"
        if not value.isascii() or any(c in value for c in "\r\n\0"):
            return f"a {name} header value httpx must judge"
    return None
