"""The admin of a test server under the password policy: the settings that make one (`CREDENTIALS`, for
`running_app` or `workspace_settings`: an admin's name and password, and the server name 0.0.0.0 of a public
deployment; `ADMIN_LOGIN`: the name and password alone) and a gradio_client signed in as that admin (`sign_in`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from tests.support.clients import local_client

if TYPE_CHECKING:
    from gradio_client import Client

ADMIN_LOGIN = {"COMPLAB_ADMIN_USER": "admin", "COMPLAB_ADMIN_PASSWORD": "s3cret pass"}  # on 127.0.0.1 only
CREDENTIALS = {**ADMIN_LOGIN, "GRADIO_SERVER_NAME": "0.0.0.0"}


def sign_in(url: str) -> Client:
    client = local_client(url)
    status, *_ = client.predict("admin", "s3cret pass", api_name="/login")  # the status line first
    assert "(admin)" in status
    return client
