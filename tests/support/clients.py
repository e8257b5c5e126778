"""The one way tests open a `gradio_client.Client` of an app served on 127.0.0.1."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gradio_client import Client

# Seconds a request may wait for its answer: the servers share two cores with other test processes, where a
# page's config took over httpx's default 5 s to arrive, and a refused call came back as "timed out".
TIMEOUT = 120


def local_client(url: str, **options) -> Client:
    """A client of the app at `url` (`options`: more of `Client`'s arguments).

    Its requests wait up to `TIMEOUT`. ssl_verify=False: gradio_client makes a new HTTP client, whose TLS context
    loads the CA bundle, for every request (~50 ms of client CPU, more than the server's work for an answer);
    127.0.0.1 has no TLS, so this changes nothing but the client's cost."""
    from gradio_client import Client

    return Client(url, **{"verbose": False, "ssl_verify": False, "httpx_kwargs": {"timeout": TIMEOUT}, **options})
