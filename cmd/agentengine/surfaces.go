package main

import (
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/api/actions"
	"github.com/agentengine/agentengine/api/adkweb"
	"github.com/agentengine/agentengine/api/files"
	"github.com/agentengine/agentengine/api/openai"
	"github.com/agentengine/agentengine/web"
)

// newSurfaces builds the HTTP surfaces `run` serves, in the router's order (the first
// one's error shape is also that of paths no surface owns). A new surface is one line
// here. Request bodies are limited once, by the router.
func newSurfaces(st *stack, log hclog.Logger) ([]api.Surface, error) {
	// The file actions share the action API's prefix: the action surface mounts them.
	fileActions := files.NewSurface(files.Deps{Uploads: st.uploads, Workspaces: st.workspaces, Logger: log.Named("files")})
	ui, err := actions.New(actions.Config{Runtime: st.runtime, Logger: log.Named("actions"), SessionBackend: st.backend,
		Extensions: []actions.Extension{fileActions}})
	if err != nil {
		return nil, err
	}
	adk := adkweb.Config{Runtime: st.runtime, Logger: log.Named("adkweb")}
	if st.traces != nil {
		adk.Traces = st.traces
	}
	return []api.Surface{
		openai.New(openai.Config{Runtime: st.runtime, Logger: log.Named("openai"), KsadkAgents: st.ksadkAgents}),
		adkweb.New(adk),
		ui,
		web.New(),
	}, nil
}
