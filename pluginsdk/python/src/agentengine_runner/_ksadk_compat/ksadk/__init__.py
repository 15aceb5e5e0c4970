"""Compatibility shim: the parts of KsADK's API that agent code imports, served by
agentengine_runner. Only `ksadk.runtime_context` is provided."""
