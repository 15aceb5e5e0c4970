package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
)

// Artifacts an agent saves with its framework's artifact service (ADK's) are documents of
// kind session.DocADKArtifact: a version per save, the session's, or the user's when the name
// carries ADK's "user:" prefix. A runner with the artifacts capability gets every
// version with each run (its data within RunArtifactBudget) and sends its saves as
// Artifact events, stored as they arrive.

// ArtifactUserPrefix marks an artifact name as the user's (ADK's convention).
const ArtifactUserPrefix = "user:"

// RunArtifactBudget caps the artifact bytes sent with one run: the newest version of
// each name first, then older ones, newest first; the rest go without their data.
const RunArtifactBudget = 16 << 20

// ArtifactKey is the document key of the artifact name of the session key: the user's
// (no session) when name has ADK's "user:" prefix.
func ArtifactKey(key session.Key, name string) session.DocKey {
	k := session.DocKey{App: key.App, User: key.User, Session: key.ID, Kind: session.DocADKArtifact, Name: name}
	if strings.HasPrefix(name, ArtifactUserPrefix) {
		k.Session = ""
	}
	return k
}

// ArtifactNames lists the names of the session's artifacts and the user's ("user:"
// names), sorted, as ADK's list_artifact_keys does.
func (rt *Runtime) ArtifactNames(ctx context.Context, key session.Key) ([]string, error) {
	names, err := rt.DocNames(ctx, key.App, key.User, key.ID, session.DocADKArtifact)
	if err != nil {
		return nil, err
	}
	users, err := rt.DocNames(ctx, key.App, key.User, "", session.DocADKArtifact)
	if err != nil {
		return nil, err
	}
	out := slices.DeleteFunc(names, func(n string) bool { return strings.HasPrefix(n, ArtifactUserPrefix) })
	for _, n := range users {
		if strings.HasPrefix(n, ArtifactUserPrefix) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// runArtifacts is RunRequest.artifacts for a turn of the session key, with at most
// budget bytes of data (RunArtifactBudget).
func (rt *Runtime) runArtifacts(ctx context.Context, key session.Key, budget int) ([]*runnerv1.Artifact, error) {
	names, err := rt.ArtifactNames(ctx, key)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	var out []*runnerv1.Artifact
	var latest, older []int // indexes into out, in the order their data is loaded
	for _, name := range names {
		vs, err := rt.store.DocVersions(ctx, ArtifactKey(key, name))
		if errors.Is(err, session.ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("list artifact versions: %w", err)
		}
		for i, d := range vs {
			if i == len(vs)-1 {
				latest = append(latest, len(out))
			} else {
				older = append(older, len(out))
			}
			out = append(out, &runnerv1.Artifact{Name: name, Version: d.Version, MimeType: d.MimeType, MetaJson: d.Meta,
				CreateTime: float64(d.CreatedAt.UnixMicro()) / 1e6, DataOmitted: true})
		}
	}
	slices.Reverse(older) // newest first
	for _, i := range append(latest, older...) {
		a := out[i]
		d, err := rt.store.GetDoc(ctx, ArtifactKey(key, a.Name), a.Version)
		if errors.Is(err, session.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("load artifact: %w", err)
		}
		if len(d.Data) > budget {
			continue
		}
		budget -= len(d.Data)
		a.Data, a.DataOmitted = d.Data, false
	}
	return out, nil
}

// artifact stores what the runner's agent saved (or deletes what it deleted) at once:
// the events after it may name the version (ADK's artifactDelta), which a client then
// fetches. A store that fails fails the run, as for the run's other writes.
func (ts *turnState) artifact(ctx context.Context, a *runnerv1.Artifact) {
	if a.Name == "" {
		ts.failure = &session.RunError{Code: "runner_error", Message: "the runner sent an artifact without a name"}
		return
	}
	ctx = context.WithoutCancel(ctx)
	key := ArtifactKey(ts.r.Key, a.Name)
	if a.Deleted {
		if err := ts.rt.store.DeleteDoc(ctx, key); err != nil && !errors.Is(err, session.ErrNotFound) {
			ts.storeErr = err
		}
		return
	}
	var meta json.RawMessage
	if len(a.MetaJson) > 0 && json.Valid(a.MetaJson) {
		meta = a.MetaJson
	}
	v, err := ts.rt.store.PutDoc(ctx, session.Doc{Key: key, MimeType: a.MimeType, Data: a.Data, Meta: meta})
	if err != nil {
		ts.storeErr = err
		return
	}
	if v != a.Version {
		// Another run of the user saved the same "user:" artifact meanwhile: the store's
		// number stands; the agent's event names the one it expected.
		ts.logger().Warn("artifact stored under another version than the runner expected", "agent", ts.r.Agent,
			"invocation", ts.r.InvocationID, "artifact", a.Name, "version", v, "expected", a.Version)
	}
}
