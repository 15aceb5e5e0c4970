"""Logging as hclog JSON lines on stderr, the format a go-plugin host parses.

go-plugin (v1.8.0) parses each stderr line that is a JSON object: `@level`, `@message`,
`@timestamp` (layout 2006-01-02T15:04:05.000000Z07:00, so exactly 6 fractional digits, or
the line is downgraded to a raw DEBUG line) and other keys as fields. A non-string
`@message` panics the host, so every value is written as a string.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from datetime import UTC, datetime

LOGGER_NAME = "agentengine_runner"

_FORMATTER = logging.Formatter()

_LEVELS = {
    logging.DEBUG: "debug",
    logging.INFO: "info",
    logging.WARNING: "warn",
    logging.ERROR: "error",
    logging.CRITICAL: "error",
}

# Reserved LogRecord attributes; anything else passed via `extra=` becomes an hclog field.
_RECORD_ATTRS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
}


def hclog_level(levelno: int) -> str:
    if levelno < logging.DEBUG:
        return "trace"
    for threshold in (logging.CRITICAL, logging.ERROR, logging.WARNING, logging.INFO):
        if levelno >= threshold:
            return _LEVELS[threshold]
    return "debug"


def timestamp(now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def format_line(level: str, message: str, fields: dict[str, object] | None = None) -> str:
    entry: dict[str, str] = {
        "@level": level,
        "@message": str(message),
        "@timestamp": timestamp(),
    }
    for key, value in (fields or {}).items():
        if not key.startswith("@"):
            entry[key] = value if isinstance(value, str) else str(value)
    return json.dumps(entry, ensure_ascii=False) + "\n"


class HclogHandler(logging.Handler):
    """Writes records to fd 2 as hclog JSON; goes quiet once stderr is gone.

    Writes go straight to the file descriptor (not sys.stderr) so that a replaced or
    closed sys.stderr cannot break logging, and an EPIPE after the host died is swallowed
    instead of killing the thread that logged.
    """

    def __init__(self, fd: int = 2, level: int = logging.NOTSET) -> None:
        super().__init__(level)
        self._fd = fd
        self._dead = False
        self._write_lock = threading.Lock()

    @property
    def dead(self) -> bool:
        return self._dead

    def mark_dead(self) -> None:
        """Stops all further writes (used when the host is known to be gone)."""
        self._dead = True

    def emit(self, record: logging.LogRecord) -> None:
        if self._dead:
            return
        try:
            fields: dict[str, object] = {
                k: v for k, v in vars(record).items() if k not in _RECORD_ATTRS
            }
            if record.name not in ("root", LOGGER_NAME):
                fields.setdefault("logger", record.name)
            if record.exc_info:
                fields["error"] = _FORMATTER.formatException(record.exc_info)
            line = format_line(hclog_level(record.levelno), record.getMessage(), fields)
            self.write(line)
        except Exception:  # never let logging take the runner down
            pass

    def write(self, line: str) -> None:
        data = line.encode("utf-8", "backslashreplace")
        with self._write_lock:
            try:
                while data and not self._dead:
                    n = os.write(self._fd, data)
                    data = data[n:]
            except OSError:  # includes BrokenPipeError: the host is gone
                self._dead = True


_handler = HclogHandler()


def handler() -> HclogHandler:
    return _handler


def get_logger() -> logging.Logger:
    """The SDK's logger: hclog JSON on stderr, independent of the root logger's config."""
    logger = logging.getLogger(LOGGER_NAME)
    if _handler not in logger.handlers:
        logger.addHandler(_handler)
        logger.propagate = False
        if logger.level == logging.NOTSET:
            logger.setLevel(_env_level())
    return logger


def install_root_handler() -> None:
    """Routes user/library logging through hclog when the user configured nothing.

    Without it Python's last-resort handler writes plain "msg" lines that the host can only
    log at DEBUG.
    """
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(_handler)


def _env_level() -> int:
    # The host can turn SDK chatter up or down without code changes.
    name = os.environ.get("AGENTENGINE_RUNNER_LOG_LEVEL", "info").strip().upper()
    name = {"TRACE": "DEBUG", "WARN": "WARNING"}.get(name, name)
    level = logging.getLevelName(name)
    return level if isinstance(level, int) else logging.INFO
