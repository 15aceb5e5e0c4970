// Command echo-twin serves the echo agent under a second name for the conformance suites.
package main

import (
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk"
)

func main() { pluginsdk.Serve(echoagent.New()) }
