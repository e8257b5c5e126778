"""The one way tests open a `gradio_client.Client` of an app served on 127.0.0.1."""
from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gradio_client import Client

# Seconds a request may wait for its answer: the servers share two cores with other test processes, where a
# page's config took over httpx's default 5 s to arrive, and a refused call came back as "timed out".
TIMEOUT = 120
# Seconds a new call waits at most for the server to close the event stream of the calls before it.
STREAM_CLOSE_S = 5.0


def local_client(url: str, **options) -> Client:
    """A client of the app at `url` (`options`: more of `Client`'s arguments).

    Its requests wait up to `TIMEOUT`. ssl_verify=False: gradio_client makes a new HTTP client, whose TLS context
    loads the CA bundle, for every request (~50 ms of client CPU, more than the server's work for an answer);
    127.0.0.1 has no TLS, so this changes nothing but the client's cost."""
    options = {"verbose": False, "ssl_verify": False, "httpx_kwargs": {"timeout": TIMEOUT}, **options}
    return _settled_client_class()(url, **options)


@functools.cache
def _settled_client_class() -> type[Client]:
    from gradio_client import Client

    class SettledClient(Client):
        """A `Client` whose next call waits for the event stream of its finished calls to close.

        gradio_client 2.7.2 reads every event of a session from one stream, which the server closes once the
        session has nothing pending. A call submitted after the last one's answer but before the client has read
        that close is tied to the closing stream and ends in `CancelledError`, though the server runs it (the
        crowd test saw it once under CI load; a reader slowed by 0.3 s before the close cancels 5 of 10
        back-to-back calls, and none with this wait). The wait is the few milliseconds the close takes."""

        def submit(self, *args, **kwargs):
            _wait_for_closing_stream(self)
            return super().submit(*args, **kwargs)

    return SettledClient


def _wait_for_closing_stream(client: Client) -> None:
    """Return once `client` has no open event stream, or has events pending on it (a stream still in use is
    not closing), or after `STREAM_CLOSE_S`."""
    deadline = time.monotonic() + STREAM_CLOSE_S
    while time.monotonic() < deadline:
        with client.pending_lock:
            if not client.stream_open or client.pending_event_ids:
                return
        time.sleep(0.005)
