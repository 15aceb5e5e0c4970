package floor

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/host/runnerproc"
)

// StartHop starts the hop plugin binary (built from bench/floor/hopplugin) under the
// host's real runner supervisor. Close the supervisor to stop it.
func StartHop(ctx context.Context, pluginPath string, log hclog.Logger) (*runnerproc.Supervisor, error) {
	abs, err := filepath.Abs(pluginPath)
	if err != nil {
		return nil, err
	}
	s := runnerproc.New(runnerproc.Config{Name: "hop", Command: []string{abs}, Logger: log})
	if err := s.Start(ctx); err != nil {
		_ = s.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("start hop plugin %s: %w", abs, err)
	}
	return s, nil
}
