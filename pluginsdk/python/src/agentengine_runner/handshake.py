"""The go-plugin handshake: magic cookie, protocol negotiation, the stdout handshake line.

The cookie must equal the Go host's HandshakeConfig (internal/runnerplugin.Handshake); keep the two
constants below in step with it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

MAGIC_COOKIE_KEY = "AGENTENGINE_RUNNER"
MAGIC_COOKIE_VALUE = "agentengine-runner-v1"

# go-plugin's CoreProtocolVersion; always 1.
CORE_PROTOCOL_VERSION = 1
# The runner protocol version we speak (the go-plugin "app" protocol version).
APP_PROTOCOL_VERSION = 1
# What Describe reports as protocol_version.
RUNNER_PROTOCOL = str(APP_PROTOCOL_VERSION)

ENV_PROTOCOL_VERSIONS = "PLUGIN_PROTOCOL_VERSIONS"
ENV_UNIX_SOCKET_DIR = "PLUGIN_UNIX_SOCKET_DIR"
ENV_UNIX_SOCKET_GROUP = "PLUGIN_UNIX_SOCKET_GROUP"
ENV_CLIENT_CERT = "PLUGIN_CLIENT_CERT"
ENV_MULTIPLEX_GRPC = "PLUGIN_MULTIPLEX_GRPC"


class HandshakeError(Exception):
    """The process was not started the way a go-plugin host starts its plugins."""


@dataclass(frozen=True)
class HandshakeEnv:
    app_version: int
    socket_dir: str | None
    socket_group: str | None


def check_env(env: Mapping[str, str] | None = None) -> HandshakeEnv:
    """Validates the environment a go-plugin host sets up; raises HandshakeError."""
    env = os.environ if env is None else env
    if env.get(MAGIC_COOKIE_KEY) != MAGIC_COOKIE_VALUE:
        raise HandshakeError(
            "This binary is an agentengine runner plugin. It is not meant to be executed "
            f"directly: the agentengine host starts it (magic cookie {MAGIC_COOKIE_KEY} "
            "missing or wrong)."
        )
    if env.get(ENV_CLIENT_CERT):
        # The host would expect our certificate in handshake field 6 and dial with TLS.
        raise HandshakeError(
            "go-plugin AutoMTLS is not supported by the Python runner SDK; "
            "start the runner with AutoMTLS disabled (unix socket in a 0700 dir)"
        )
    versions = env.get(ENV_PROTOCOL_VERSIONS, "").strip()
    if versions:
        offered = {v.strip() for v in versions.split(",") if v.strip()}
        if str(APP_PROTOCOL_VERSION) not in offered:
            raise HandshakeError(
                f"incompatible runner protocol: host offers {sorted(offered)}, "
                f"this runner speaks {APP_PROTOCOL_VERSION}"
            )
    return HandshakeEnv(
        app_version=APP_PROTOCOL_VERSION,
        socket_dir=env.get(ENV_UNIX_SOCKET_DIR) or None,
        socket_group=env.get(ENV_UNIX_SOCKET_GROUP) or None,
    )


def handshake_line(app_version: int, network: str, address: str) -> str:
    # No field 6 (no AutoMTLS) and no field 7: old hosts would glue a mux flag onto field 6.
    return f"{CORE_PROTOCOL_VERSION}|{app_version}|{network}|{address}|grpc\n"
