// Command badlog is a test runner that writes hostile output: malformed and mistyped hclog
// JSON (go-plugin #38 panics a host on {"@message": 5}), control characters and an
// over-long line, on its real stderr and through go-plugin's stdio stream. Each run
// answers with the runner's environment, one variable per line.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentengine/agentengine/pluginsdk"
)

var junk = []string{
	`{"@message": 5}`,
	`{"@message":"typed level","@level":5}`,
	`{"@level":"info","@message":"hello from badlog","@timestamp":"2026-01-01T00:00:00.000Z","count":3,"nested":{"a":[1,2]},"@module":"runner.badlog"}`,
	`{not json`,
	`[WARN] a prefixed warning`,
	"escape \x1b[31mred\x1b[0m and bell \a",
	`{"@message":"dup","@message":7,"@level":"info"}`,
	`null`,
	`"just a string"`,
	strings.Repeat("x", 100<<10),
	`{"@level":"error","@message":"the end"}`,
}

type runner struct{ stderr io.Writer }

func (runner) Info() pluginsdk.Info { return pluginsdk.Info{Name: "badlog"} }

func (r runner) Run(_ context.Context, _ *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	for _, l := range junk {
		fmt.Fprintln(r.stderr, l)
		fmt.Fprintln(os.Stdout, l) // os.Stdout is go-plugin's stdio stream by now
	}
	return emit.Text(strings.Join(os.Environ(), "\n"))
}

func main() {
	stderr := os.Stderr // before plugin.Serve swaps it
	for _, l := range junk {
		fmt.Fprintln(stderr, l)
	}
	pluginsdk.Serve(runner{stderr: stderr})
}
