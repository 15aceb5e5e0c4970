// Command echo-go is the agentengine runner for the echo agent (package echo). The
// agentengine host builds and starts it; run directly it explains that and exits.
package main

import (
	"github.com/agentengine/agentengine/examples/echo-go/echo"
	"github.com/agentengine/agentengine/pluginsdk"
)

func main() { pluginsdk.Serve(echo.New()) }
