"""A runner module that prints at import time, like chatty libraries do."""

from agentengine_runner.testing.demo import DemoRunner

print("banner printed while importing user code")

runner = DemoRunner()
