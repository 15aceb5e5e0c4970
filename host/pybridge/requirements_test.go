package pybridge

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	agentengine "github.com/agentengine/agentengine"
)

func TestRunnerRequirements(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		want    []string
		wantErr string
	}{
		{"plain", "grpcio>=1.60\nprotobuf>=4.25,<8\n", []string{"grpcio>=1.60", "protobuf>=4.25,<8"}, ""},
		{"comments and blanks", "# runner\n\ngrpcio>=1.60  # gRPC\n", []string{"grpcio>=1.60"}, ""},
		{"empty", "# nothing\n", nil, "lists no requirements"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RunnerRequirements(fstest.MapFS{RunnerRequirementsFile: {Data: []byte(tt.file)}})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("got %q %v, want %q", got, err, tt.want)
			}
		})
	}
	if _, err := RunnerRequirements(fstest.MapFS{}); err == nil {
		t.Fatal("a missing file must be an error")
	}
}

// The embedded list names protobuf with a range, never an exact pin: the project's own
// requirements must be free to choose a version inside it. It does not name grpcio: the
// runner serves gRPC itself, and a project's environment need not have it.
func TestEmbeddedRunnerRequirements(t *testing.T) {
	reqs, err := RunnerRequirements(agentengine.PythonBridge)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, r := range reqs {
		if strings.Contains(r, "==") {
			t.Errorf("%q is an exact pin", r)
		}
		if i := strings.IndexAny(r, "<>=!~[; "); i > 0 {
			names[r[:i]] = true
		}
	}
	if !names["protobuf"] {
		t.Errorf("%v does not name protobuf", reqs)
	}
	if names["grpcio"] {
		t.Errorf("%v names grpcio, which the runner does not import", reqs)
	}
}
