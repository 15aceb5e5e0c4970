package agentengine

import "embed"

// PythonBridge is the Python side of agentengine, rooted at the module root: the runner
// SDK (agentengine_runner, with a stand-in for ksadk.runtime_context that the runner puts
// on sys.path only where the project has no ksadk of its own), the framework bridges
// (agentengine_adapters), the pip constraints file that pins agentengine's own test
// environment, and runner-requirements.txt, what the runner SDK itself needs in a
// project's environment (pybridge.RunnerRequirements). host/pybridge extracts it for the
// interpreter; users never install it. "all:" keeps __init__.py, the _proto package and
// _ksadk_compat, which plain patterns skip.
//
//go:embed all:pluginsdk/python/src/agentengine_runner
//go:embed all:adapters/agentengine_adapters pluginsdk/python/constraints.txt
//go:embed pluginsdk/python/runner-requirements.txt
var PythonBridge embed.FS
