package langgraph

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/apitest"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// A run that has left the runtime's memory is joined from the store: its messages and
// values, not its tokens.
func TestJoinStreamOfAStoredRun(t *testing.T) {
	client, stop := inprocess.Serve(echoagent.New())
	rt, err := host.New(host.Config{Store: memory.New(), Retention: time.Millisecond,
		Agents: []host.Agent{{Name: "echo", Framework: "langgraph", Runner: client}}})
	if err != nil {
		t.Fatal(err)
	}
	r := api.NewRouter(api.Config{Runtime: rt, Surfaces: []api.Surface{New(Config{Runtime: rt})}})
	e := &env{t: t, rt: rt, url: apitest.Serve(t, r, rt, stop).URL}
	tid := e.thread(`{}`)
	e.obj("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "earlier"), http.StatusOK)
	run := e.obj("POST", "/threads/"+tid+"/runs", runBody("echo", "use the tool on rome"), http.StatusOK)
	rid := str(run["run_id"])
	e.obj("GET", "/threads/"+tid+"/runs/"+rid+"/join", "", http.StatusOK)
	key := session.Key{App: "echo", User: rt.DefaultUser(), ID: tid}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, live := rt.LiveRun(key, rid); !live {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run stays in memory")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, evs := e.stream("GET", "/threads/"+tid+"/runs/"+rid+"/stream?stream_mode=values&stream_mode=messages-tuple", "")
	if got := strings.Join(names(evs), ","); got != "metadata,values,messages,values,messages,values,messages,values" {
		t.Fatalf("stored stream: %s", got)
	}
	final := messages(t, evs[len(evs)-1].Data)
	if len(final) != 6 || final[0] != [2]string{"human", "earlier"} || final[5][0] != "ai" || !strings.Contains(final[5][1], "rome") {
		t.Fatalf("final values: %v", final)
	}
	if g := e.obj("GET", "/threads/"+tid+"/runs/"+rid, "", http.StatusOK); g["status"] != "success" {
		t.Fatalf("stored run: %v", g)
	}
}
