"""Tools of the sample agents, as plain typed functions every framework can wrap."""

from __future__ import annotations


def get_weather(city: str) -> str:
    """Return the current weather for a city."""
    # The station number is made here, so a reply quoting it shows the tool really ran.
    return f"Weather in {city}: sunny, 21 C (station {len(city) * 7})."


def send_email(to: str, body: str) -> str:
    """Send an email. A side effect: runs only after a person approves it."""
    return f"Email sent to {to} ({len(body)} characters)."
