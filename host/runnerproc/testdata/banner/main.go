// Command banner is a test runner that prints to stdout before the go-plugin handshake,
// which breaks the handshake (go-plugin #164).
package main

import (
	"context"
	"fmt"

	"github.com/agentengine/agentengine/pluginsdk"
)

type runner struct{}

func (runner) Info() pluginsdk.Info                                              { return pluginsdk.Info{Name: "banner"} }
func (runner) Run(context.Context, *pluginsdk.Request, *pluginsdk.Emitter) error { return nil }

func main() {
	fmt.Println("Welcome to banner 1.0")
	pluginsdk.Serve(runner{})
}
