package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/gcfloor"
	"github.com/agentengine/agentengine/internal/metrics"
	"github.com/agentengine/agentengine/internal/tracing"
)

type runOptions struct {
	host        string
	port        int
	interactive bool
	token       string
	tokens      string
	userHeader  string
	rateLimit   int
	origins     []string
	hosts       []string
	publicURL   string
	pushPrivate bool
	maxBody     int64
	logLevel    string
	logJSON     bool
	store       storeFlags
	startWait   time.Duration
	stallWait   time.Duration
	drain       time.Duration
	maxRuns     int
	maxState    int64
	strict      bool
	isolateEnv  bool
	reload      bool
	ksadk       ksadkRunFlags
	metricsAddr string
	trace       bool
	logFormat   string
	// listening, when set, is called once the server accepts connections (web opens
	// the browser there).
	listening func(addr net.Addr)
	// moreSurfaces, when set, adds surfaces to the served ones (web's ADK dev UI).
	moreSurfaces func(ctx context.Context, st *stack) []api.Surface
}

func newRunCmd() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [DIR...]",
		Short: "Serve agent projects over an OpenAI-compatible API (or chat in the terminal with -i)",
		Long: `Serve one or more agent projects. Each DIR holds an agentengine.yaml; each project
gets its own runner subprocess and is selected by its name as the OpenAI "model".

Endpoints: POST /v1/responses, POST /v1/chat/completions, GET /v1/models, GET /health,
and an A2A agent per project at /a2a/{name} (card: /a2a/{name}/.well-known/agent-card.json).

The server binds 127.0.0.1 unless told otherwise; binding any other address requires
--token, which clients then send as "Authorization: Bearer <token>".

Sessions are stored in DIR/.agentengine/ui/sessions.sqlite (the first DIR) unless
--session-backend / --session-path or KSADK_SESSION_BACKEND, KSADK_STM_PATH say otherwise.`,
		Example: `  agentengine run examples/echo-go
  agentengine run ./agent-a ./agent-b --port 9000
  agentengine run -i examples/echo-go`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd, args, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.host, "host", "127.0.0.1", "address to bind; non-loopback addresses require --token")
	f.IntVarP(&o.port, "port", "p", 8080, "port to listen on (0 picks a free one)")
	f.BoolVarP(&o.interactive, "interactive", "i", false, "chat with the (first) agent in this terminal instead of serving HTTP")
	f.StringVar(&o.token, "token", "", "bearer token clients must send (required for non-loopback binds); also AGENTENGINE_TOKEN")
	f.StringVar(&o.tokens, "tokens", "", "file of API keys, one \"KEY USER\" a line: each key acts as its user on every API (read again when it changes)")
	f.StringVar(&o.userHeader, "user-header", "", "request header a trusted reverse proxy sets to the authenticated user (e.g. X-AgentEngine-User); no header is trusted without it; also AGENTENGINE_USER_HEADER")
	f.IntVar(&o.rateLimit, "rate-limit", 0, "most requests one user may make a minute (bursts up to it); more are refused with 429 and Retry-After (0: no limit)")
	f.StringSliceVar(&o.origins, "allow-origin", nil, "browser origins allowed to call the API (other cross-origin requests are rejected; loopback origins are allowed while --host is loopback)")
	f.StringSliceVar(&o.hosts, "allow-host", nil, "Host header names accepted besides the loopback ones (the name clients or a reverse proxy use); \"*\" accepts any")
	f.StringVar(&o.publicURL, "public-url", "", "the server's URL as clients reach it (e.g. behind a reverse proxy), for the URLs it advertises such as the A2A agent cards' (default: the request's host)")
	f.BoolVar(&o.pushPrivate, "a2a-push-allow-private", false, "let A2A push-notification webhooks be loopback, private or link-local addresses (refused by default)")
	f.Int64Var(&o.maxBody, "max-body-bytes", 32<<20, "largest accepted request body")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: trace, debug, info, warn, error")
	f.BoolVar(&o.logJSON, "log-json", false, "write logs as JSON lines")
	f.StringVar(&o.store.backend, "session-backend", "", "session backend: memory or local (SQLite); default from KSADK_SESSION_BACKEND, else local")
	f.StringVar(&o.store.path, "session-path", "", "SQLite session file for the local backend")
	f.DurationVar(&o.stallWait, "runner-stall-timeout", 15*time.Second, "how long a run may go without an event before its runner must answer a health check (within 5s, or this if shorter); a runner that does not is replaced and its runs fail")
	f.DurationVar(&o.startWait, "runner-start-timeout", 0, "how long a runner may take to start (default 60s for Go, 120s for Python runners)")
	f.Int64Var(&o.maxState, "max-state-bytes", host.DefaultStateTierBytes, "largest size of each session state tier (app:, user: and session state, as JSON); a write that would grow a tier past it is refused with 413 (-1: no limit)")
	f.IntVar(&o.maxRuns, "max-runs-per-user", 0, "most runs one user may have in progress at once; more are refused with 429 (0: no limit)")
	f.DurationVar(&o.drain, "drain-timeout", defaultDrainTimeout, "on SIGTERM or Ctrl-C, how long runs in progress may finish before they are interrupted")
	f.BoolVar(&o.strict, "strict", false, "stop unless every agent's runner builds and starts (by default an agent that fails is marked unavailable, with its error in /health, and the others serve)")
	f.BoolVar(&o.reload, "reload", false, "watch the projects' files and reload an agent when its code or config changes (runs in flight finish on the old code; a change that does not build or start keeps the last good version serving)")
	f.BoolVar(&o.isolateEnv, "isolate-env", false, "give runners only the configured environment (.env, agentengine.yaml's env:) and PATH/HOME, not the shell's other variables")
	f.BoolVar(&o.trace, "trace", true, "trace each turn with OpenTelemetry: the last traces are kept in memory, and exported over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_TRACES_EXPORTER=otlp) is set")
	f.StringVar(&o.logFormat, "log-format", "", "log format: text or json (one JSON object a line; same as --log-json)")
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address (host:port, no auth) instead of GET /metrics on the API")
	o.ksadk.register(f, true)
	return cmd
}

func newLogger(cmd *cobra.Command, level string, asJSON bool) (hclog.Logger, error) {
	lvl := hclog.LevelFromString(level)
	if lvl == hclog.NoLevel {
		return nil, fmt.Errorf("--log-level %q: use trace, debug, info, warn or error", level)
	}
	return hclog.New(&hclog.LoggerOptions{
		Name: "agentengine", Level: lvl, Output: cmd.ErrOrStderr(), JSONFormat: asJSON,
	}), nil
}

func runRun(cmd *cobra.Command, dirs []string, o runOptions) error {
	ctx := cmd.Context()
	if o.token == "" {
		o.token = envOr("AGENTENGINE_TOKEN", "")
	}
	if o.userHeader == "" {
		o.userHeader = envOr("AGENTENGINE_USER_HEADER", "")
	}
	if o.rateLimit < 0 {
		return fmt.Errorf("--rate-limit %d: use 0 (no limit) or more", o.rateLimit)
	}
	if err := checkPublicURL(o.publicURL); err != nil {
		return err
	}
	if !o.interactive && !isLoopback(o.host) && o.token == "" && o.tokens == "" {
		return fmt.Errorf("--host %s is not a loopback address: set --token (or AGENTENGINE_TOKEN) or --tokens so the API is not open to the network", o.host)
	}
	switch o.logFormat {
	case "", "text":
	case "json":
		o.logJSON = true
	default:
		return fmt.Errorf("--log-format %q: use text or json", o.logFormat)
	}
	log, err := newLogger(cmd, o.logLevel, o.logJSON)
	if err != nil {
		return err
	}
	if o.interactive {
		// Keep the terminal for the conversation: only warnings and errors are logged.
		log.SetLevel(max(hclog.LevelFromString(o.logLevel), hclog.Warn))
	}
	// A bad tokens file is reported before any runner starts.
	var keys *api.Tokens
	if o.tokens != "" {
		if keys, err = api.LoadTokens(o.tokens, log.Named("tokens")); err != nil {
			return err
		}
	}
	// A heap goal of at least 64 MiB: with a live heap of a few megabytes the collector
	// would otherwise run many times a second under load (GOGC from the environment wins).
	// Past 192 MiB live, the headroom stays 192 MiB (see gcHeadroomCap).
	defer gcfloor.Start(gcFloorBytes, 100).CapHeadroom(gcHeadroomCap).Stop()
	start := time.Now()
	var ln net.Listener
	if !o.interactive {
		// A busy port is reported before any virtualenv, install or runner start.
		if ln, err = listenFirst(o.host, o.port); err != nil {
			return err
		}
		defer ln.Close()
	}
	var mx *metrics.Metrics
	if !o.interactive {
		mx = metrics.New()
		if !strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
			_, stop, err := mx.ExportOTLP(ctx, os.Getenv)
			if err != nil {
				return err
			}
			defer func() {
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := stop(sctx); err != nil {
					log.Warn("metrics export shutdown", "error", err)
				}
			}()
		}
	}
	var metricsLn net.Listener
	if o.metricsAddr != "" && !o.interactive {
		if metricsLn, err = net.Listen("tcp", o.metricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr %s: %w", o.metricsAddr, err)
		}
		defer metricsLn.Close()
	}
	var tr *tracing.Tracing
	// OTEL_SDK_DISABLED=true is OpenTelemetry's own off switch.
	if o.trace && !o.ksadk.noTrace && !o.interactive && !strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		if tr, err = tracing.New(ctx, tracing.Config{Getenv: os.Getenv, Version: versionString(), Recent: tracing.NewRecent(0, 0)}); err != nil {
			return err
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tr.Shutdown(sctx); err != nil {
				log.Warn("tracing shutdown", "error", err)
			}
		}()
	}
	st, err := openStack(ctx, stackOptions{tracing: tr, dirs: dirs, store: o.store, log: log, progress: cmd.ErrOrStderr(), startWait: o.startWait, stallWait: o.stallWait, env: o.ksadk.runnerEnv(), maxRunsPerUser: o.maxRuns, maxStateBytes: o.maxState, strict: o.strict || o.interactive, isolateEnv: o.isolateEnv, metrics: mx})
	if err != nil {
		return err
	}
	closeWait := 15 * time.Second
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), closeWait)
		defer cancel()
		if err := st.close(cctx); err != nil {
			log.Warn("shutdown", "error", err)
		}
	}()
	if o.interactive {
		return chat(ctx, st.runtime, cmd.InOrStdin(), cmd.OutOrStdout(), o.ksadk.chat())
	}

	surfaces, err := newSurfaces(st, log, surfaceOptions{publicURL: o.publicURL, bearer: o.token != "" || keys != nil, pushAllowPrivate: o.pushPrivate})
	if err != nil {
		return err
	}
	if o.moreSurfaces != nil {
		surfaces = append(surfaces, o.moreSurfaces(ctx, st)...)
	}
	// With a key required, the browser UI gets in through a one-time login URL.
	var logins *api.Logins
	if o.token != "" || keys != nil {
		logins = api.NewLogins(loginTTL)
	}
	router := api.NewRouter(api.Config{
		Runtime:        st.runtime,
		Logger:         log.Named("http"),
		MaxBodyBytes:   o.maxBody,
		Surfaces:       surfaces,
		AllowedOrigins: o.origins,
		AllowedHosts:   o.hosts,
		// Bound to loopback, pages of this machine (a UI's dev server) may call the API.
		LoopbackOrigins: isLoopback(o.host),
		AuthToken:       o.token,
		Tokens:          keys,
		Logins:          logins,
		UserHeader:      o.userHeader,
		RateLimit:       o.rateLimit,
		Metrics:         mx,
		MetricsRoute:    metricsLn == nil,
		Trace:           tr.Middleware(),
	})
	if metricsLn != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", mx.Handler())
		msrv := api.NewServer(mux)
		go func() { _ = msrv.Serve(metricsLn) }()
		defer msrv.Close()
		fmt.Fprintf(cmd.ErrOrStderr(), "metrics on http://%s/metrics\n", metricsLn.Addr())
	}
	if o.reload {
		// Watching starts before "serving" is printed: an edit made right after it counts.
		r := newReloader(st, cmd.ErrOrStderr(), log, o.drain)
		if w, err := r.watch(); err != nil {
			log.Error("reload is off", "error", err)
			fmt.Fprintf(cmd.ErrOrStderr(), "reload is off: %v\n", err)
		} else {
			rctx, stopReload := context.WithCancel(ctx)
			reloaded := make(chan struct{})
			go func() {
				defer close(reloaded)
				r.run(rctx, w)
			}()
			// Stopped before the runners close: a reload in progress must not outlive them.
			defer func() { stopReload(); <-reloaded }()
			fmt.Fprintln(cmd.ErrOrStderr(), "reload on: an edit to a project's files restarts its agent on the new code")
		}
	}
	srv := api.NewServer(router)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	names := ""
	for i, a := range st.runtime.Agents() {
		if i > 0 {
			names += ", "
		}
		names += a.Name
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "agentengine serving %s on http://%s (ready in %s; Ctrl-C to stop)\n", names, ln.Addr(), elapsed(start))
	for _, a := range st.runtime.Unavailable() {
		fmt.Fprintf(cmd.ErrOrStderr(), "agent %s is unavailable (its error is above and in /health)\n", a.Name)
	}
	if logins != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "Browser login (works once, within %s): http://%s/login?code=%s\n", loginTTL, ln.Addr(), logins.Code())
	}
	if o.listening != nil {
		o.listening(ln.Addr())
	}
	var force <-chan struct{}
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve: %w", err)
		}
		force = secondSignal(cmd.ErrOrStderr())
	case <-ctx.Done():
		// Listening for the second interrupt before the notice that invites it: one sent
		// in between went to the first's spent channel and was lost.
		force = secondSignal(cmd.ErrOrStderr())
		fmt.Fprintf(cmd.ErrOrStderr(), "shutting down: runs in progress may finish for up to %s (Ctrl-C again to stop them now)\n", o.drain)
	}
	if drain(log, srv, st.runtime, o.drain, force) {
		// The runners get no graceful wait either: their process groups are killed.
		closeWait = forcedCloseWait
	}
	return nil
}

// secondSignal is closed at the next SIGINT or SIGTERM after the one that started the
// shutdown: the user wants out now.
func secondSignal(out io.Writer) <-chan struct{} {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	force := make(chan struct{})
	go func() {
		<-sig
		signal.Stop(sig)
		fmt.Fprintln(out, "second interrupt: ending the runs in progress as interrupted and exiting")
		close(force)
	}()
	return force
}

// forcedCloseWait bounds closing the runners after a second Ctrl-C.
const forcedCloseWait = 2 * time.Second

// gcFloorBytes is the server's minimum heap goal (see package gcfloor).
const gcFloorBytes = 64 << 20

// gcHeadroomCap bounds how far the heap grows between collections once the live heap,
// stacks and globals are past it (GOGC lowered to as little as 50): a large live heap is
// thousands of open streams or runs, and at GOGC 100 the collector's headroom was as
// large as all of them together. Heaps below it (the memory store of a long benchmark
// included) collect as before.
const gcHeadroomCap = 192 << 20

// loginTTL is how long the login URL printed at start stays valid.
const loginTTL = 10 * time.Minute

func isLoopback(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
