package pluginsdk

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/agentengine/agentengine/internal/runnerplugin"
)

// LogLevelEnv names the environment variable that sets a runner's log level (trace,
// debug, info, warn, error); the default is info.
const LogLevelEnv = "AGENTENGINE_RUNNER_LOG_LEVEL"

// parentPollInterval is how often a runner checks that the host is still alive.
const parentPollInterval = time.Second

// Serve runs r as an agentengine runner subprocess and returns when the host shuts it
// down. It is meant to be the whole of an agent's main function. Run directly (not by the
// host) it prints what to do instead and exits with status 1.
func Serve(r Runner) {
	hs := runnerplugin.Handshake()
	if os.Getenv(hs.MagicCookieKey) != hs.MagicCookieValue {
		fmt.Fprintf(os.Stderr, "%s is an agentengine runner: the agentengine host starts it, it is not meant to be run directly.\n"+
			"Run the agent with `agentengine run` (or `agentengine web`) in its project directory.\n"+
			"(The %s environment variable that the host sets is missing or wrong.)\n",
			filepath.Base(os.Args[0]), hs.MagicCookieKey)
		os.Exit(1)
	}

	// Captured before plugin.Serve swaps os.Stderr for the GRPCStdio pipe: logs go to the
	// real stderr, which the host reads line by line as hclog JSON.
	logger := hclog.New(&hclog.LoggerOptions{
		Name:       "runner",
		Output:     os.Stderr,
		JSONFormat: true,
		Level:      logLevelFromEnv(),
	})

	// go-plugin has no parent watch: without one a runner outlives a host that died
	// without Kill (SIGKILL, crash), holding its sockets and memory forever.
	if ppid := os.Getppid(); ppid > 1 {
		go watchParent(ppid)
	}

	srv := newRunnerServer(r, logger)
	// The run lane lives beside go-plugin's socket, in the directory the host made for it.
	if dir := os.Getenv(plugin.EnvUnixSocketDir); dir != "" && laneEnabled() {
		lane, err := listenLane(srv, dir, maxLaneFrameBytes, logger.Named("lane"))
		if err != nil {
			logger.Warn("no run lane; the host will call Run over gRPC", "error", err)
		} else {
			defer lane.close()
			srv.runLane = lane.path
		}
	}

	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: hs,
		Plugins:         plugin.PluginSet{runnerplugin.Name: &runnerplugin.Plugin{Service: srv}},
		GRPCServer:      runnerplugin.NewServer,
		Logger:          logger,
	})
}

func logLevelFromEnv() hclog.Level {
	if l := hclog.LevelFromString(os.Getenv(LogLevelEnv)); l != hclog.NoLevel {
		return l
	}
	return hclog.Info
}

// watchParent exits the process once it has been reparented, i.e. the host is gone. It
// does not log: the host's end of stderr is closed by then.
func watchParent(ppid int) {
	t := time.NewTicker(parentPollInterval)
	defer t.Stop()
	for range t.C {
		if os.Getppid() != ppid {
			os.Exit(0)
		}
	}
}
