// Command floor serves the performance floors (docs/PERFORMANCE.md) on 127.0.0.1 so that
// bench/cmd/loadgen can measure them in the same run as agentengine:
//
//	gin        a bare gin handler (JSON body of -body-bytes)
//	hop        gin → go-plugin gRPC stream hop to bench/floor/hopplugin
//	hopsqlite  the hop + a 5-row SQLite WAL transaction per request
//	hoppg      the hop + a 5-row Postgres transaction per request (only with -pg-dsn)
//
// When all three listen it prints one line per floor ("gin http://127.0.0.1:PORT") and
// then "ready" on stdout. It stops on SIGINT/SIGTERM or after -lifetime.
//
// With -scenario it instead drives each floor itself with bench/load (the load driver of
// bench/cmd/loadgen), prints the results and exits: a quick look at the floors alone.
//
//	go build -o /tmp/hopplugin ./bench/floor/hopplugin
//	go run ./bench/cmd/floor -plugin /tmp/hopplugin -body-bytes 1248
//	go run ./bench/cmd/floor -plugin /tmp/hopplugin -scenario nonstream -c 16 -d 3s
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/bench/floor"
	"github.com/agentengine/agentengine/bench/load"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

// floorSpec is one floor to serve.
type floorSpec struct {
	name string
	port int
	h    http.Handler
}

func run() error {
	var (
		plugin    = flag.String("plugin", "", "path of the built hopplugin binary (go build ./bench/floor/hopplugin)")
		bodyBytes = flag.Int("body-bytes", 0, "size of non-stream responses (0: natural size)")
		dbPath    = flag.String("db", "", "SQLite file of the hop+SQLite floor (default: a temporary file)")
		host      = flag.String("host", "127.0.0.1", "loopback address to bind")
		ginPort   = flag.Int("gin-port", 0, "port of the bare gin floor (0: any free port)")
		hopPort   = flag.Int("hop-port", 0, "port of the hop floor")
		sqlPort   = flag.Int("hopsqlite-port", 0, "port of the hop+SQLite floor")
		pgDSN     = flag.String("pg-dsn", "", "Postgres connection string: adds the hop+Postgres floor (table floor_events in the DSN's schema)")
		pgPort    = flag.Int("hoppg-port", 0, "port of the hop+Postgres floor")
		lifetime  = flag.Duration("lifetime", 30*time.Minute, "stop by itself after this long")
		scenario  = flag.String("scenario", "", "drive each floor with this bench/load scenario, print the results and exit")
		conc      = flag.Int("c", 1, "with -scenario: requests in flight")
		dur       = flag.Duration("d", 3*time.Second, "with -scenario: measured duration per floor")
		deltas    = flag.Int("deltas", 0, "with -scenario: text deltas per turn")
		asJSON    = flag.Bool("json", false, "with -scenario: print results as JSON lines")
	)
	flag.Parse()
	if *plugin == "" {
		return errors.New("-plugin is required: go build -o /tmp/hopplugin ./bench/floor/hopplugin")
	}
	if ip := net.ParseIP(*host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-host %q: the floors serve loopback addresses only", *host)
	}
	gin.SetMode(gin.ReleaseMode)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *lifetime)
	defer cancel()

	log := hclog.New(&hclog.LoggerOptions{Name: "floor", Level: hclog.Warn, Output: os.Stderr})
	sup, err := floor.StartHop(ctx, *plugin, log)
	if err != nil {
		return err
	}
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		_ = sup.Close(cctx)
	}()

	path := *dbPath
	if path == "" {
		dir, err := os.MkdirTemp("", "agentengine-floor-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "floor.sqlite")
	}
	db, err := floor.OpenSQLite(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()

	hop, err := floor.NewHop(floor.Config{BodyBytes: *bodyBytes, Runner: sup})
	if err != nil {
		return err
	}
	hopSQL, err := floor.NewHop(floor.Config{BodyBytes: *bodyBytes, Runner: sup, DB: db})
	if err != nil {
		return err
	}
	floors := []floorSpec{
		{"gin", *ginPort, floor.NewGin(floor.Config{BodyBytes: *bodyBytes})},
		{"hop", *hopPort, hop},
		{"hopsqlite", *sqlPort, hopSQL},
	}
	if *pgDSN != "" {
		pg, err := floor.OpenPostgres(ctx, *pgDSN)
		if err != nil {
			return err
		}
		defer pg.Close()
		hopPG, err := floor.NewHop(floor.Config{BodyBytes: *bodyBytes, Runner: sup, DB: pg})
		if err != nil {
			return err
		}
		floors = append(floors, floorSpec{"hoppg", *pgPort, hopPG})
	}
	errc := make(chan error, len(floors))
	var servers []*http.Server
	var urls []string
	for _, f := range floors {
		ln, err := net.Listen("tcp", net.JoinHostPort(*host, fmt.Sprint(f.port)))
		if err != nil {
			return fmt.Errorf("listen for %s: %w", f.name, err)
		}
		srv := &http.Server{Handler: f.h, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, srv)
		go func() { errc <- srv.Serve(ln) }()
		urls = append(urls, "http://"+ln.Addr().String())
		fmt.Printf("%s http://%s\n", f.name, ln.Addr())
	}
	fmt.Println("ready")

	if *scenario != "" {
		return drive(ctx, floors, urls, load.Config{
			Scenario: load.Scenario(*scenario), Concurrency: *conc, Duration: *dur, Deltas: *deltas, PID: os.Getpid(),
		}, *asJSON)
	}

	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	for _, s := range servers {
		_ = s.Shutdown(sctx)
	}
	return nil
}

// drive runs cfg against each floor in turn and prints the results. The CPU figures are
// this process's (all three floors live in it), which is right while one floor is driven.
func drive(ctx context.Context, floors []floorSpec, urls []string, cfg load.Config, asJSON bool) error {
	for i, f := range floors {
		c := cfg
		c.URL, c.Label = urls[i], f.name
		res, err := load.Run(ctx, c)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		if asJSON {
			if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
				return err
			}
			continue
		}
		res.WriteText(os.Stdout)
	}
	return nil
}
