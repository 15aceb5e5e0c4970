package pluginsdk

import (
	"strings"
	"testing"

	"github.com/agentengine/agentengine/internal/apisurface"
)

// plumbingNames are identifiers of the go-plugin and gRPC plumbing that the host and Serve
// share through internal/runnerplugin; none is for agent authors.
var plumbingNames = map[string]bool{
	"GRPCPlugin": true, "GRPCDialOptions": true, "GRPCServerOptions": true, "Handshake": true,
	"PluginName": true, "ProtocolVersion": true, "RunLaneEnv": true, "MaxMessageBytes": true,
}

// plumbingImports are the packages whose types in an exported declaration make it plumbing.
var plumbingImports = []string{"github.com/hashicorp/go-plugin", "google.golang.org/grpc"}

// plumbing lists the exported identifiers of the package in dir that are plumbing.
func plumbing(t *testing.T, dir string) []string {
	t.Helper()
	ids, err := apisurface.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, id := range ids {
		_, name, _ := strings.Cut(id.Name, ".")
		if name == "" {
			name = id.Name
		}
		bad := plumbingNames[name]
		for _, ref := range id.Refs {
			for _, p := range plumbingImports {
				bad = bad || ref == p || strings.HasPrefix(ref, p+"/")
			}
		}
		if bad {
			out = append(out, id.Name)
		}
	}
	return out
}

// go doc ./pluginsdk lists only what agent authors use: no go-plugin or gRPC plumbing.
func TestAPIShowsNoPluginPlumbing(t *testing.T) {
	for _, name := range plumbing(t, ".") {
		t.Errorf("pluginsdk exports %s, go-plugin/gRPC plumbing: keep it in internal/runnerplugin", name)
	}
	// The check finds plumbing where there is some.
	got := strings.Join(plumbing(t, "../internal/apisurface/testdata/plumbing"), " ")
	if got != "GRPCPlugin Handshake Options" {
		t.Errorf("plumbing in the sample package: %q", got)
	}
}
