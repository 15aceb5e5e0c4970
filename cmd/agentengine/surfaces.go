package main

import (
	"fmt"
	"net/url"

	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/api/a2a"
	"github.com/agentengine/agentengine/api/actions"
	"github.com/agentengine/agentengine/api/adkweb"
	"github.com/agentengine/agentengine/api/files"
	"github.com/agentengine/agentengine/api/langgraph"
	"github.com/agentengine/agentengine/api/openai"
	"github.com/agentengine/agentengine/host/project"
	"github.com/agentengine/agentengine/web"
)

// newSurfaces builds the HTTP surfaces `run` serves, in the router's order (the first
// one's error shape is also that of paths no surface owns). A new surface is one line
// here. Request bodies are limited once, by the router.
func newSurfaces(st *stack, log hclog.Logger, o surfaceOptions) ([]api.Surface, error) {
	// The file actions share the action API's prefix: the action surface mounts them.
	fileActions := files.NewSurface(files.Deps{Uploads: st.uploads, Workspaces: st.workspaces, Logger: log.Named("files")})
	uiCfg := actions.Config{Runtime: st.runtime, Logger: log.Named("actions"), SessionBackend: st.backend,
		Extensions: []actions.Extension{fileActions}}
	if st.traces != nil {
		uiCfg.Traces = st.traces
	}
	ui, err := actions.New(uiCfg)
	if err != nil {
		return nil, err
	}
	adk := adkweb.Config{Runtime: st.runtime, Logger: log.Named("adkweb"), Projects: map[string]string{}}
	for _, p := range st.project {
		if p.Framework == project.FrameworkADK {
			adk.Projects[p.Name] = p.Dir // the agent builder's files
		}
	}
	if st.traces != nil {
		adk.Traces = st.traces
	}
	return []api.Surface{
		openai.New(openai.Config{Runtime: st.runtime, Logger: log.Named("openai"), KsadkAgents: st.ksadkAgents}),
		adkweb.New(adk),
		ui,
		a2a.New(a2a.Config{Runtime: st.runtime, Logger: log.Named("a2a"), PublicURL: o.publicURL, Bearer: o.bearer,
			PushAllowPrivate: o.pushAllowPrivate}),
		langgraph.New(langgraph.Config{Runtime: st.runtime, Logger: log.Named("langgraph")}),
		web.New(),
	}, nil
}

// surfaceOptions are the run flags surfaces describe themselves with.
type surfaceOptions struct {
	// publicURL is the server's URL as clients reach it (--public-url).
	publicURL string
	// bearer: clients must send a key (--token or --tokens).
	bearer bool
	// pushAllowPrivate lets A2A webhooks be private addresses (--a2a-push-allow-private).
	pushAllowPrivate bool
}

// checkPublicURL checks --public-url: empty, or an http(s) URL of a host with no query.
func checkPublicURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--public-url %q: use the server's URL as clients reach it, e.g. https://agents.example.com", s)
	}
	return nil
}
