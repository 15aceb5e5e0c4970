package floor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/agentengine/agentengine/bench/floor"
	"github.com/agentengine/agentengine/bench/load"
)

// startFloors builds the hop plugin and serves the three floors on 127.0.0.1.
func startFloors(t *testing.T, bodyBytes int) map[string]string {
	t.Helper()
	gin.SetMode(gin.TestMode)
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command to build the hop plugin")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "hopplugin")
	if out, err := exec.Command(goTool, "build", "-o", bin, "./hopplugin").CombinedOutput(); err != nil {
		t.Fatalf("build hopplugin: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sup, err := floor.StartHop(ctx, bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sup.Close(context.Background()) })
	db, err := floor.OpenSQLite(ctx, filepath.Join(dir, "floor.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	hop, err := floor.NewHop(floor.Config{BodyBytes: bodyBytes, Runner: sup})
	if err != nil {
		t.Fatal(err)
	}
	hopSQL, err := floor.NewHop(floor.Config{BodyBytes: bodyBytes, Runner: sup, DB: db})
	if err != nil {
		t.Fatal(err)
	}
	urls := map[string]string{}
	for name, h := range map[string]http.Handler{"gin": floor.NewGin(floor.Config{BodyBytes: bodyBytes}), "hop": hop, "hopsqlite": hopSQL} {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		urls[name] = srv.URL
	}
	if _, err := floor.NewHop(floor.Config{}); err == nil {
		t.Error("NewHop without a runner: no error")
	}
	return urls
}

func TestFloorsSpeakTheLoadProtocol(t *testing.T) {
	const size = 2000
	urls := startFloors(t, size)
	for name, url := range urls {
		ctx := context.Background()
		res, err := load.Run(ctx, load.Config{URL: url, Label: name, Scenario: load.NonStream, Concurrency: 2, Requests: 30})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Errors != 0 || res.OK != 30 || res.BytesPerTurn != size {
			t.Errorf("%s nonstream: ok %d errors %v, %v bytes", name, res.OK, res.ErrorSamples, res.BytesPerTurn)
		}
		res, err = load.Run(ctx, load.Config{URL: url, Scenario: load.Stream, Deltas: 40, Requests: 5})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Errors != 0 || res.DeltasPerTurn != 40 || res.FirstDelta == nil {
			t.Errorf("%s stream: errors %v, %v deltas per turn", name, res.ErrorSamples, res.DeltasPerTurn)
		}
	}
	// The hop relays the plugin's default reply ("Echo: hello there" in three deltas).
	res, err := load.Run(context.Background(), load.Config{URL: urls["hop"], Scenario: load.Stream, Requests: 2})
	if err != nil || res.DeltasPerTurn != 3 {
		t.Fatalf("default reply: %v deltas, %v", res.DeltasPerTurn, err)
	}
	// Streams held open by the plugin's delay complete.
	res, err = load.Run(context.Background(), load.Config{URL: urls["hop"], Scenario: load.Streams, Streams: 20, Deltas: 3, DelayMS: 20})
	if err != nil || res.Streams.Completed != 20 || res.Errors != 0 {
		t.Fatalf("streams: %+v %v", res.Streams, err)
	}
}

func TestResponseBodyIsJSONOfTheRequestedSize(t *testing.T) {
	gin.SetMode(gin.TestMode)
	for _, size := range []int{0, 1500, 4096} {
		srv := httptest.NewServer(floor.NewGin(floor.Config{BodyBytes: size}))
		resp, err := http.Post(srv.URL+"/v1/responses", "application/json", jsonBody(`{"model":"m","input":"say \"hi\" <now>"}`))
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Status     string `json:"status"`
			OutputText string `json:"output_text"`
		}
		n := resp.ContentLength
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		srv.Close()
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if body.Status != "completed" || body.OutputText != `Echo: say "hi" <now>` {
			t.Errorf("size %d: %+v", size, body)
		}
		if size > 0 && n != int64(size) {
			t.Errorf("size %d: got %d bytes", size, n)
		}
	}
}

func jsonBody(s string) *strings.Reader { return strings.NewReader(s) }

// The Postgres floor stores each turn as five rows in one transaction (on the server
// AGENTENGINE_TEST_PG_DSN names; skipped without one, as the store's tests are).
func TestPostgresFloorWritesFiveRowsPerTurn(t *testing.T) {
	dsn := os.Getenv("AGENTENGINE_TEST_PG_DSN")
	if dsn == "" {
		t.Skip("no PostgreSQL test server: set AGENTENGINE_TEST_PG_DSN (scripts/pg-test.sh run go test ...)")
	}
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	schema := fmt.Sprintf("floor_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	pg, err := floor.OpenPostgres(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	for _, s := range []string{"s1", "s2"} {
		if err := pg.Write5(ctx, s, `say "hi"`, "Echo: hi"); err != nil {
			t.Fatal(err)
		}
	}
	// The same session again violates (session_id, seq): nothing of the turn is stored.
	if err := pg.Write5(ctx, "s1", "again", "x"); err == nil {
		t.Fatal("a second turn with the same session and seqs was stored")
	}
	var rows, sessions int
	if err := conn.QueryRow(ctx, "SELECT count(*), count(DISTINCT session_id) FROM "+schema+".floor_events").Scan(&rows, &sessions); err != nil {
		t.Fatal(err)
	}
	if rows != 10 || sessions != 2 {
		t.Fatalf("%d rows in %d sessions, want 10 in 2", rows, sessions)
	}
}
