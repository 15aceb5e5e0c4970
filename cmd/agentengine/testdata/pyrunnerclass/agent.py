"""Test fixture: the shape of KsADK's long-task-resume sample. The project answers
through a subclass of KsADK's LangGraphRunner; there is no agent object."""

from typing import Any

from ksadk.runners.langgraph_runner import LangGraphRunner


class LongTaskRunner(LangGraphRunner):
    def load_agent(self) -> None:
        self._agent = None

    async def invoke(self, input_data: dict[str, Any]) -> dict[str, Any]:
        return {"output": "started: " + str(input_data.get("input") or "")}

    async def stream(self, input_data: dict[str, Any]):
        output = "started: " + str(input_data.get("input") or "")
        yield {"type": "text", "delta": output}
        yield {"type": "final", "output": output}


root_agent = None
