package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/api/adkdevui"
	"github.com/agentengine/agentengine/host/project"
	"github.com/agentengine/agentengine/session/backend"
)

// sessionEnvVars are the shell variables that choose the session store; when one is
// set, `web` leaves the choice to it (as KsADK's web does).
func sessionEnvVars() []string {
	return []string{
		backend.EnvBackend, backend.EnvBackendAlias, backend.EnvDSN, backend.EnvPath, backend.EnvPathAlias,
	}
}

type webOptions struct {
	host   string
	port   int
	noOpen bool
	// isolateEnv: as run --isolate-env.
	isolateEnv bool
	// reload: as run --reload, on by default here (as in adk web).
	reload bool
	ksadk  ksadkRunFlags
}

func newWebCmd() *cobra.Command {
	var o webOptions
	cmd := &cobra.Command{
		Use:   "web [DIR]",
		Short: "Serve an agent project with its Web UI and open it in the browser",
		Long: `Serve the agent project in DIR (default: the current directory) exactly as "run"
does, with the Web UI at http://localhost:PORT/, and open that page in the browser
(xdg-open, or open on macOS) unless --no-open.

Sessions are kept in DIR/.agentengine/ui/sessions.sqlite, so conversations started in
the browser survive restarts; set KSADK_SESSION_BACKEND or KSADK_STM_PATH in the shell
to keep them elsewhere. A sessions.sqlite written by KsADK is imported on first use
(see docs/MIGRATING.md).

For a Google ADK project whose environment has google-adk, ADK's own dev UI is served
as well, at http://localhost:PORT/dev-ui/, from the files of that installed google-adk
(see docs/web-api.md).`,
		Example: `  agentengine web
  agentengine web my-agent -p 9000 --no-open
  agentengine web my-agent --model gpt-4o-mini`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWeb(cmd, args, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.host, "host", "127.0.0.1", "address to bind; non-loopback addresses require AGENTENGINE_TOKEN")
	f.IntVarP(&o.port, "port", "p", 8080, "port to listen on (0 picks a free one)")
	f.BoolVar(&o.noOpen, "no-open", false, "print the URL instead of opening the browser")
	f.BoolVar(&o.reload, "reload", true, "reload the agent when its code or config changes (--reload=false to turn off)")
	f.BoolVar(&o.isolateEnv, "isolate-env", false, "give the runner only the configured environment (.env, agentengine.yaml's env:) and PATH/HOME, not the shell's other variables")
	o.ksadk.register(f, false)
	return cmd
}

func runWeb(cmd *cobra.Command, dirs []string, o webOptions) error {
	ro := runOptions{
		host: o.host, port: o.port, maxBody: 32 << 20, logLevel: "info",
		store: webStore(dirs, os.LookupEnv), ksadk: o.ksadk, drain: defaultDrainTimeout,
		isolateEnv: o.isolateEnv, reload: o.reload,
		trace: true, // the UIs' trace views read the kept traces; --no-trace turns it off
	}
	devUI := "" // what web says about ADK's dev UI
	ro.moreSurfaces = func(ctx context.Context, st *stack) []api.Surface {
		s, note := adkDevUI(ctx, dirs)
		devUI = note
		if s == nil {
			return nil
		}
		return []api.Surface{s}
	}
	ro.listening = func(addr net.Addr) {
		url := webURL(o.host, addr)
		fmt.Fprintf(cmd.ErrOrStderr(), "Web UI: %s\n", url)
		switch {
		case strings.HasPrefix(devUI, "/"):
			fmt.Fprintf(cmd.ErrOrStderr(), "ADK dev UI: %s\n", strings.TrimSuffix(url, "/")+devUI)
		case devUI != "":
			fmt.Fprintf(cmd.ErrOrStderr(), "ADK dev UI: not served: %s\n", devUI)
		}
		if o.noOpen {
			return
		}
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "could not open a browser (%v): open %s yourself\n", err, url)
		}
	}
	return runRun(cmd, dirs, ro)
}

// adkDevUI serves ADK's dev UI from the google-adk installed in the environment of the
// first ADK project among dirs. note is the UI's path when it is served, else why not
// ("" without ADK projects).
func adkDevUI(ctx context.Context, dirs []string) (s api.Surface, note string) {
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	for _, d := range dirs {
		p, err := project.Load(d)
		if err != nil || p.Framework != project.FrameworkADK {
			continue
		}
		in, err := p.FindPython()
		if err != nil {
			return nil, fmt.Sprintf("%s: %v", p.Name, err)
		}
		loc, err := adkdevui.Locate(ctx, in.Path)
		if err != nil {
			return nil, fmt.Sprintf("%s (%s): %v", p.Name, in.Path, err)
		}
		return adkdevui.New(loc.Dir), adkdevui.Path
	}
	return nil, ""
}

// webStore is the local SQLite store of the project unless the shell chose a store.
func webStore(dirs []string, lookup func(string) (string, bool)) storeFlags {
	for _, k := range sessionEnvVars() {
		if v, ok := lookup(k); ok && v != "" {
			return storeFlags{}
		}
	}
	return storeFlags{backend: backend.Local}
}

// webURL is the address to browse: localhost for loopback and wildcard binds.
func webURL(host string, addr net.Addr) string {
	port := ""
	if ta, ok := addr.(*net.TCPAddr); ok {
		port = strconv.Itoa(ta.Port)
	} else if _, p, err := net.SplitHostPort(addr.String()); err == nil {
		port = p
	}
	h := host
	if ip := net.ParseIP(host); h == "" || h == "localhost" || (ip != nil && (ip.IsLoopback() || ip.IsUnspecified())) {
		h = "localhost"
	}
	return "http://" + net.JoinHostPort(h, port) + "/"
}

// openBrowser starts the desktop's URL opener and does not wait for it.
func openBrowser(url string) error {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	c := exec.Command(name, url)
	if err := c.Start(); err != nil {
		return err
	}
	go func() { _ = c.Wait() }() // reap it
	return nil
}
