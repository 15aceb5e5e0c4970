// Command benchreport turns the JSON results that bench/run.sh collects (one
// bench/cmd/loadgen -json output per file, named by its -label) into markdown tables:
// absolute numbers, ratios to the floors measured in the same run, and the
// performance targets with a pass/miss column.
//
//	benchreport -dir /tmp/agentengine-bench.XXXX/results
//
// Labels it knows (others are listed at the end):
//
//	idle.{mem,sqlite}.{start,end}
//	ns.{c1,c16}.{gin,hop,hopsql,hoppg,mem,sqlite,pg}  non-stream turns
//	ns.c16.pg2.{a,b}                              non-stream turns split across two Postgres replicas
//	ns.c16.hoppg2.{a,b}                           the same split across two hop + Postgres floors
//	st.d1000.{gin,hop,hopsql,mem,sqlite}          streamed turns, 1000 deltas
//	hist.{h10,h10000}.{mem,sqlite,pg}             turns on a conversation with history
//	streams.s1000.{hop,mem,sqlite}                concurrent open streams
//	follow.pg                                     a stream on one replica followed on another
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/agentengine/agentengine/bench/load"
)

func main() {
	dir := flag.String("dir", "", "directory of loadgen -json results (*.json)")
	command := flag.String("command", "bench/run.sh", "the command that produced the results, shown in the report")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "benchreport: -dir is required")
		os.Exit(2)
	}
	rs, err := readResults(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
	loadStart, _ := os.ReadFile(filepath.Join(*dir, "loadavg.start"))
	loadEnd, _ := os.ReadFile(filepath.Join(*dir, "loadavg.end"))
	rep := &report{w: os.Stdout, rs: rs, used: map[string]bool{}}
	rep.machine(*command, string(loadStart), string(loadEnd))
	rep.nonStream()
	rep.stream()
	rep.history()
	rep.follow()
	rep.streams()
	rep.idle()
	rep.targets()
	rep.rest()
}

func readResults(dir string) (map[string]*load.Result, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	out := map[string]*load.Result{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var r load.Result
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if r.Label == "" {
			r.Label = strings.TrimSuffix(filepath.Base(f), ".json")
		}
		out[r.Label] = &r
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no results in %s", dir)
	}
	return out, nil
}

type report struct {
	w    io.Writer
	rs   map[string]*load.Result
	used map[string]bool
	// checks are the performance targets, filled while the tables are written.
	checks []check
}

type check struct {
	target, measured, limit string
	pass                    *bool
}

func (r *report) p(format string, a ...any) { fmt.Fprintf(r.w, format, a...) }

func (r *report) get(label string) *load.Result {
	res := r.rs[label]
	if res != nil {
		r.used[label] = true
	}
	return res
}

// name is the display name of a server label.
func name(who string) string {
	switch who {
	case "gin":
		return "floor: bare gin"
	case "hop":
		return "floor: gin + go-plugin hop"
	case "hopsql":
		return "floor: hop + 5-row SQLite tx"
	case "hoppg":
		return "floor: hop + 5-row Postgres tx"
	case "pg":
		return "agentengine, Postgres store (1 replica)"
	case "pg2.a":
		return "agentengine, Postgres, 2 replicas: A"
	case "pg2.b":
		return "agentengine, Postgres, 2 replicas: B"
	case "pg2":
		return "agentengine, Postgres, 2 replicas: A + B"
	case "hoppg2.a":
		return "floor: hop + 5-row Postgres tx, 2 processes: A"
	case "hoppg2.b":
		return "floor: hop + 5-row Postgres tx, 2 processes: B"
	case "hoppg2":
		return "floor: hop + 5-row Postgres tx, 2 processes: A + B"
	case "mem":
		return "agentengine, memory store"
	case "sqlite":
		return "agentengine, SQLite store"
	}
	return who
}

func (r *report) machine(command, loadStart, loadEnd string) {
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				if _, v, ok := strings.Cut(l, ":"); ok {
					cpu = strings.TrimSpace(v)
				}
				break
			}
		}
	}
	var u syscall.Utsname
	kernel := "unknown"
	if syscall.Uname(&u) == nil {
		kernel = utsString(u.Sysname[:]) + " " + utsString(u.Release[:])
	}
	r.p("### Machine\n\n")
	r.p("- %d CPUs (nproc), %s\n- kernel %s, %s/%s, %s\n", runtime.NumCPU(), cpu, kernel, runtime.GOOS, runtime.GOARCH, runtime.Version())
	if loadStart != "" {
		r.p("- load average before the run: %s; after: %s (the machine is shared)\n", field3(loadStart), field3(loadEnd))
	}
	r.p("- command: `%s`\n\n", command)
}

func field3(s string) string {
	f := strings.Fields(s)
	if len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return strings.TrimSpace(s)
}

func utsString(b []int8) string {
	var buf bytes.Buffer
	for _, c := range b {
		if c == 0 {
			break
		}
		buf.WriteByte(byte(c))
	}
	return buf.String()
}

func num(v float64, prec int) string {
	if v == 0 {
		return "—"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func p50(x *load.Percentiles) float64 {
	if x == nil {
		return 0
	}
	return x.P50
}

func p99(x *load.Percentiles) float64 {
	if x == nil {
		return 0
	}
	return x.P99
}

func cpuTurn(res *load.Result) (host, runner float64) {
	if res == nil || res.Server == nil {
		return 0, 0
	}
	return res.Server.CPUPerTurnUS, res.Server.ChildCPUPerTurnUS
}

func errs(res *load.Result) string {
	if res == nil {
		return "—"
	}
	return fmt.Sprintf("%d/%d", res.Errors, res.Requests)
}

func pass(ok bool) *bool { return &ok }

func (r *report) addCheck(target, measured, limit string, ok *bool) {
	r.checks = append(r.checks, check{target, measured, limit, ok})
}

// floorFor is the floor each row is compared with.
func floorFor(who string) string {
	switch who {
	case "sqlite", "hopsql":
		return "hopsql"
	case "pg", "hoppg":
		return "hoppg"
	case "pg2", "hoppg2":
		return "hoppg2"
	case "pg2.a", "hoppg2.a": // each replica against its floor counterpart
		return "hoppg2.a"
	case "pg2.b", "hoppg2.b":
		return "hoppg2.b"
	}
	return "hop"
}

func (r *report) nonStream() {
	r.p("### Non-stream turns\n\n")
	r.p("`POST /v1/responses` with `{\"model\":\"echo-go\",\"input\":\"hello there\"}`; ratios are to the hop floor (memory rows and floors), to the hop + SQLite floor (SQLite rows) or to the hop + Postgres floor (Postgres rows) measured in the same run. With two replicas the load is split across them (c/2 in flight on each, at once); the A + B row sums their turns/s. Their floor is measured the same way: two floor processes on the same database, the load split across them. Each row is the server's median round; the throughput targets below take the median of each round's own ratio (a server and its floor a few seconds apart).\n\n")
	r.p("| server | c | turns/s | × floor | p50 ms | × floor p50 | p99 ms | host CPU µs/turn | runner CPU µs/turn | errors |\n")
	r.p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range []string{"c1", "c16"} {
		for _, who := range []string{"gin", "hop", "hopsql", "hoppg", "hoppg2.a", "hoppg2.b", "hoppg2", "mem", "sqlite", "pg", "pg2.a", "pg2.b", "pg2"} {
			res := r.nonStreamResult(c, who)
			if res == nil {
				continue
			}
			fl := r.nonStreamResult(c, floorFor(who))
			var flTPS, flP50 float64
			if fl != nil {
				flTPS, flP50 = fl.TurnsPerSec, p50(fl.Latency)
			}
			host, runner := cpuTurn(res)
			r.p("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", name(who), res.Concurrency,
				num(res.TurnsPerSec, 0), ratio(res.TurnsPerSec, flTPS), num(p50(res.Latency), 3), ratio(p50(res.Latency), flP50),
				num(p99(res.Latency), 3), num(host, 0), num(runner, 0), errs(res))
		}
	}
	r.p("\n")
	for _, s := range []struct {
		who, floor, name, floorName string
		target                      bool
	}{
		{"mem", "hop", "memory", "hop", true},
		{"sqlite", "hopsql", "SQLite", "hop + 5-row SQLite tx", true},
		{"pg", "hoppg", "Postgres (1 replica)", "hop + 5-row Postgres tx", true},
		{"pg2", "hoppg2", "Postgres (2 replicas together, one machine)", "hop + 5-row Postgres tx (2 processes together, the same split)", true},
		// The stricter comparison, shown for what it is: two replicas (and their two
		// runners) against one floor process, which pays no second process.
		{"pg2", "hoppg", "Postgres (2 replicas together, one machine)", "hop + 5-row Postgres tx (1 process)", false},
	} {
		res, fl := r.nonStreamResult("c16", s.who), r.nonStreamResult("c16", s.floor)
		if res != nil && fl != nil && fl.TurnsPerSec > 0 {
			x := res.TurnsPerSec / fl.TurnsPerSec
			measured := fmt.Sprintf("%.0f vs %.0f turns/s = %.2f×", res.TurnsPerSec, fl.TurnsPerSec, x)
			// With interleaved rounds, a round's server and floor ran minutes apart at
			// most, under the same load on the machine: the median of the rounds' own
			// ratios is the ratio, not that of two medians taken apart.
			if rs := r.roundRatios("c16", s.who, s.floor); len(rs) > 1 {
				x = median(rs)
				parts := make([]string, len(rs))
				for i, v := range rs {
					parts[i] = fmt.Sprintf("%.2f×", v)
				}
				measured = fmt.Sprintf("median of the rounds' ratios %.2f× (rounds: %s; median rounds %.0f vs %.0f turns/s)",
					x, strings.Join(parts, ", "), res.TurnsPerSec, fl.TurnsPerSec)
			}
			ok := pass(x >= 0.6 && res.Errors == 0)
			if !s.target {
				ok = nil
			}
			r.addCheck(fmt.Sprintf("non-stream throughput, %s store, c=16: ≥ 0.6× the %s floor", s.name, s.floorName),
				measured, "≥ 0.60×", ok)
		}
	}
	if res, fl := r.rs["ns.c1.mem"], r.rs["ns.c1.hop"]; res != nil && fl != nil && p50(fl.Latency) > 0 {
		x := p50(res.Latency) / p50(fl.Latency)
		r.addCheck("non-stream p50 at one connection (memory store) ≤ 1.5× the hop's",
			fmt.Sprintf("%.3f vs %.3f ms = %.2f×", p50(res.Latency), p50(fl.Latency), x), "≤ 1.50×", pass(x <= 1.5))
	}
}

func (r *report) stream() {
	var rows []string
	for _, who := range []string{"gin", "hop", "hopsql", "mem", "sqlite"} {
		if r.rs["st.d1000."+who] != nil {
			rows = append(rows, who)
		}
	}
	if len(rows) == 0 {
		return
	}
	r.p("### Streamed turns, 1000 text deltas\n\n")
	r.p("`\"stream\":true,\"model_options\":{\"deltas\":1000}`. Host CPU per delta is the server process's utime+stime over the run divided by the text deltas received (the floors relay each runner event as one flushed SSE event). First delta is the first `*.delta` event (the reasoning delta for echo-go).\n\n")
	r.p("| server | c | turns/s | host CPU µs/delta | × floor | first byte p50 ms | first delta p50 ms | first delta p99 ms | turn p50 ms | errors |\n")
	r.p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	cpuDelta := func(res *load.Result) float64 {
		if res == nil || res.Server == nil {
			return 0
		}
		return res.Server.CPUPerDeltaUS
	}
	for _, who := range rows {
		res := r.get("st.d1000." + who)
		fl := r.get("st.d1000." + floorFor(who))
		r.p("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", name(who), res.Concurrency, num(res.TurnsPerSec, 1),
			num(cpuDelta(res), 2), ratio(cpuDelta(res), cpuDelta(fl)), num(p50(res.TTFB), 3), num(p50(res.FirstDelta), 3),
			num(p99(res.FirstDelta), 3), num(p50(res.Latency), 1), errs(res))
	}
	r.p("\n")
	for _, who := range []string{"mem", "sqlite"} {
		res := r.rs["st.d1000."+who]
		if res == nil || res.Server == nil {
			continue
		}
		v := cpuDelta(res)
		r.addCheck(fmt.Sprintf("host CPU per streamed delta (%s) ≤ 10 µs", name(who)), fmt.Sprintf("%.2f µs", v), "≤ 10 µs", pass(v > 0 && v <= 10 && res.Errors == 0))
	}
	r.firstByte()
}

// firstByte reports short streams at one connection (labels st.c1.*), where the first
// delta's latency is not queued behind another stream's deltas.
func (r *report) firstByte() {
	var rows []string
	for _, who := range []string{"gin", "hop", "hopsql", "mem", "sqlite"} {
		if r.rs["st.c1."+who] != nil {
			rows = append(rows, who)
		}
	}
	if len(rows) == 0 {
		return
	}
	r.p("Short streams (echo-go's default reply: 2 reasoning and 3 text deltas) at one connection, for the latency of the first bytes:\n\n")
	r.p("| server | turns/s | first byte p50 ms | first delta p50 ms | first delta p90 ms | first delta p99 ms | turn p50 ms | host CPU µs/turn | errors |\n")
	r.p("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, who := range rows {
		res := r.get("st.c1." + who)
		host, _ := cpuTurn(res)
		var p90 float64
		if res.FirstDelta != nil {
			p90 = res.FirstDelta.P90
		}
		r.p("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name(who), num(res.TurnsPerSec, 0), num(p50(res.TTFB), 3),
			num(p50(res.FirstDelta), 3), num(p90, 3), num(p99(res.FirstDelta), 3), num(p50(res.Latency), 3), num(host, 0), errs(res))
	}
	r.p("\n")
	fl := r.rs["st.c1.hop"]
	for _, who := range []string{"mem", "sqlite"} {
		res := r.rs["st.c1."+who]
		if res == nil || fl == nil || res.FirstDelta == nil || fl.FirstDelta == nil {
			continue
		}
		d := res.FirstDelta.P50 - fl.FirstDelta.P50
		r.addCheck(fmt.Sprintf("first delta of a stream ≤ 2 ms after the runner's (%s, c=1; the hop floor's first delta stands for the runner's)", name(who)),
			fmt.Sprintf("p50 %.3f vs %.3f ms = %+.3f ms", res.FirstDelta.P50, fl.FirstDelta.P50, d), "≤ +2 ms", pass(d <= 2))
	}
}

// sizes returns the N of labels "prefix<N>.<who>" present, ascending.
func (r *report) sizes(prefix string) []int {
	var out []int
	seen := map[int]bool{}
	for l := range r.rs {
		rest, ok := strings.CutPrefix(l, prefix)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.SplitN(rest, ".", 2)[0])
		if err == nil && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// roundRatios returns, for each interleaved round k of the non-stream point at c
// (ns.<c>.<who>.r<k>, split loads summed), who's turns/s over floor's in that round.
// A round with errors counts as missing, whichever half had them.
func (r *report) roundRatios(c, who, floor string) []float64 {
	round := func(w string, k int) float64 {
		base := fmt.Sprintf("ns.%s.%s.r%d", c, w, k)
		parts := []string{base}
		if isPair(w) {
			parts = []string{base + ".a", base + ".b"}
		}
		tps := 0.0
		for _, l := range parts {
			res := r.rs[l] // not r.get: the rounds stay listed under "Other results"
			if res == nil || res.Errors != 0 {
				return 0
			}
			tps += res.TurnsPerSec
		}
		return tps
	}
	var out []float64
	for k := 1; ; k++ {
		x, f := round(who, k), round(floor, k)
		if x == 0 || f == 0 {
			return out
		}
		out = append(out, x/f)
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// isPair reports whether who is a load split across two servers (ns.<c>.<who>.{a,b}).
func isPair(who string) bool { return who == "pg2" || who == "hoppg2" }

// nonStreamResult is ns.<c>.<who>, the sum of a split load's two halves for pg2 and
// hoppg2.
func (r *report) nonStreamResult(c, who string) *load.Result {
	if isPair(who) {
		return r.pair(c, who)
	}
	return r.get("ns." + c + "." + who)
}

// pair sums the two halves of a split load (ns.<c>.<who>.{a,b}): turns/s and CPU add
// up, latencies are the slower half's.
func (r *report) pair(c, who string) *load.Result {
	a, b := r.get("ns."+c+"."+who+".a"), r.get("ns."+c+"."+who+".b")
	if a == nil || b == nil {
		return nil
	}
	sum := *a
	sum.Label = "ns." + c + "." + who
	sum.Concurrency = a.Concurrency + b.Concurrency
	sum.Requests, sum.OK, sum.Errors = a.Requests+b.Requests, a.OK+b.OK, a.Errors+b.Errors
	sum.TurnsPerSec = a.TurnsPerSec + b.TurnsPerSec
	if p50(b.Latency) > p50(a.Latency) {
		sum.Latency = b.Latency
	}
	if a.Server != nil && b.Server != nil && sum.OK > 0 {
		s := *a.Server
		s.CPUSeconds += b.Server.CPUSeconds
		s.ChildCPUSeconds += b.Server.ChildCPUSeconds
		s.CPUPerTurnUS = s.CPUSeconds / float64(sum.OK) * 1e6
		s.ChildCPUPerTurnUS = s.ChildCPUSeconds / float64(sum.OK) * 1e6
		sum.Server = &s
	}
	return &sum
}

// follow reports live-follow latency across replicas (label follow.pg).
func (r *report) follow() {
	res := r.get("follow.pg")
	if res == nil || res.Follow == nil {
		return
	}
	f := res.Follow
	r.p("### Live follow across replicas\n\n")
	r.p("A stream on Postgres replica A (%d text deltas, %d ms apart), followed from its `response.created` on via `GET /v1/responses/{id}?stream=true` on replica B. Per text delta: the time from A's client receiving it to B's client receiving it, over the deltas A's client received after B's first event (earlier ones reach B in its replay); deltas are matched from the end of the two streams.\n\n", res.Deltas, res.DelayMS)
	r.p("| turns | deltas measured | p50 ms | p90 ms | p99 ms | max ms | B joins after ms (p50) | deltas missing on B | extra on B | errors |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var n int
	var q50, q90, q99, qmax float64
	if f.Latency != nil {
		n, q50, q90, q99, qmax = f.Latency.N, f.Latency.P50, f.Latency.P90, f.Latency.P99, f.Latency.Max
	}
	r.p("| %d | %d | %s | %s | %s | %s | %s | %d | %d | %s |\n\n", res.OK, n, num(q50, 3), num(q90, 3), num(q99, 3), num(qmax, 3), num(p50(f.Join), 1), f.Missing, f.Extra, errs(res))
	if f.Latency != nil {
		r.addCheck("live-follow latency across replicas (stream on A, followed on B), p50 ≤ 5 ms",
			fmt.Sprintf("p50 %.3f ms, p99 %.3f ms", q50, q99), "≤ 5 ms", pass(q50 <= 5 && f.Missing == 0 && res.Errors == 0))
	}
}

func (r *report) history() {
	hs := r.sizes("hist.h")
	if len(hs) == 0 {
		return
	}
	r.p("### Turn latency against session history\n\n")
	r.p("Non-stream turns at one connection on conversations seeded with the given number of events by sending turns first (%d events per echo-go turn). A conversation serves measured turns only while its history stays within 20%% of the target, so the smallest history uses a fresh conversation per measured turn. bench/run.sh measures each size in three interleaved rounds; a row is the round with the median p50 (every round is under \"Other results\").\n\n", load.DefaultEventsPerTurn)
	r.p("| server | history events | conversations | seed turns (s) | turns/s | p50 ms | p90 ms | p99 ms | host CPU µs/turn | runner CPU µs/turn | × smallest-history p50 | errors |\n")
	r.p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, who := range []string{"mem", "sqlite", "pg"} {
		base := r.get(fmt.Sprintf("hist.h%d.%s", hs[0], who))
		for _, h := range hs {
			res := r.get(fmt.Sprintf("hist.h%d.%s", h, who))
			if res == nil || res.History == nil || res.Latency == nil {
				continue
			}
			var bp float64
			if base != nil {
				bp = p50(base.Latency)
			}
			host, runner := cpuTurn(res)
			r.p("| %s | %d–%d | %d | %d (%.1f s) | %s | %s | %s | %s | %s | %s | %s | %s |\n", name(who), res.History.Events, res.History.MaxEvents,
				res.History.Conversations, res.History.SeedTurns, res.History.SeedSeconds, num(res.TurnsPerSec, 0),
				num(p50(res.Latency), 3), num(res.Latency.P90, 3), num(p99(res.Latency), 3), num(host, 0), num(runner, 0), ratio(p50(res.Latency), bp), errs(res))
		}
		big := r.rs[fmt.Sprintf("hist.h%d.%s", hs[len(hs)-1], who)]
		if len(hs) > 1 && base != nil && big != nil && p50(base.Latency) > 0 && p50(big.Latency) > 0 {
			x := p50(big.Latency) / p50(base.Latency)
			r.addCheck(fmt.Sprintf("turn latency at %d events of history within 1.2× of at %d (%s)", hs[len(hs)-1], hs[0], name(who)),
				fmt.Sprintf("p50 %.3f vs %.3f ms = %.2f×", p50(big.Latency), p50(base.Latency), x), "≤ 1.20×", pass(x <= 1.2 && big.Errors == 0))
		}
	}
	r.p("\n")
}

func (r *report) streams() {
	ns := r.sizes("streams.s")
	if len(ns) == 0 {
		return
	}
	var rows []*load.Result
	var who []string
	for _, w := range []string{"hop", "mem", "sqlite"} {
		if res := r.get(fmt.Sprintf("streams.s%d.%s", ns[len(ns)-1], w)); res != nil && res.Streams != nil {
			rows = append(rows, res)
			who = append(who, w)
		}
	}
	if len(rows) == 0 {
		return
	}
	r.p("### Concurrent open streams\n\n")
	r.p("All streams are opened at once and held open by the runner's per-delta delay (`deltas` × `delay_ms`); a stream counts as open from its first event to its end.\n\n")
	r.p("| server | streams | deltas × delay | completed | most open at once | all open after ms | host RSS before → peak MB | RSS kB per stream | host CPU s | errors |\n")
	r.p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, res := range rows {
		s := res.Server
		rss, per, cpu := "—", "—", "—"
		if s != nil {
			rss = fmt.Sprintf("%.1f → %.1f", s.RSSBeforeMB, s.RSSPeakMB)
			if res.Streams.Target > 0 {
				per = fmt.Sprintf("%.0f", (s.RSSPeakMB-s.RSSBeforeMB)*1024/float64(res.Streams.Target))
			}
			cpu = fmt.Sprintf("%.2f", s.CPUSeconds)
		}
		r.p("| %s | %d | %d × %d ms | %d | %d | %s | %s | %s | %s | %s |\n", name(who[i]), res.Streams.Target, res.Deltas, res.DelayMS,
			res.Streams.Completed, res.Streams.MaxOpen, num(res.Streams.AllOpenMS, 0), rss, per, cpu, errs(res))
		if who[i] != "hop" {
			ok := res.Streams.Target >= 1000 && res.Streams.Completed == res.Streams.Target && res.Streams.MaxOpen == res.Streams.Target
			r.addCheck(fmt.Sprintf("≥ 1,000 concurrent open streams on this machine (%s)", name(who[i])),
				fmt.Sprintf("%d/%d completed, %d open at once, peak RSS %s MB", res.Streams.Completed, res.Streams.Target, res.Streams.MaxOpen, rss), "all complete, all open at once", pass(ok))
		}
	}
	r.p("\n")
}

func (r *report) idle() {
	r.p("### Idle host RSS\n\n")
	r.p("| server | right after start MB | after the run (idle 2 s) MB | idle CPU over 1 s |\n|---|---:|---:|---:|\n")
	var seen bool
	for _, who := range []string{"mem", "sqlite"} {
		st, end := r.get("idle."+who+".start"), r.get("idle."+who+".end")
		if st == nil && end == nil {
			continue
		}
		seen = true
		rss := func(res *load.Result) float64 {
			if res == nil || res.Server == nil {
				return 0
			}
			return res.Server.RSSAfterMB
		}
		cpu := "—"
		if end != nil && end.Server != nil {
			cpu = fmt.Sprintf("%.0f ms", end.Server.CPUSeconds*1000)
		}
		r.p("| %s | %s | %s | %s |\n", name(who), num(rss(st), 1), num(rss(end), 1), cpu)
		if v := rss(st); v > 0 {
			r.addCheck(fmt.Sprintf("idle host RSS ≤ 60 MB (%s, right after start)", name(who)), fmt.Sprintf("%.1f MB", v), "≤ 60 MB", pass(v <= 60))
		}
		if v := rss(end); v > 0 {
			r.addCheck(fmt.Sprintf("idle host RSS after the whole run (%s; informational)", name(who)), fmt.Sprintf("%.1f MB", v), "(≤ 60 MB)", nil)
		}
	}
	if !seen {
		r.p("| (not measured) | | | |\n")
	}
	r.p("\n")
}

func (r *report) targets() {
	r.p("### Targets\n\n| target | measured | limit | result |\n|---|---|---|---|\n")
	for _, c := range r.checks {
		res := "info"
		if c.pass != nil {
			res = "**miss**"
			if *c.pass {
				res = "pass"
			}
		}
		r.p("| %s | %s | %s | %s |\n", c.target, c.measured, c.limit, res)
	}
	r.p("\n")
}

func (r *report) rest() {
	var extra []string
	for l := range r.rs {
		if !r.used[l] {
			extra = append(extra, l)
		}
	}
	if len(extra) == 0 {
		return
	}
	sort.Strings(extra)
	r.p("### Other results\n\n| label | scenario | c | turns/s | p50 ms | p99 ms | errors |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, l := range extra {
		res := r.rs[l]
		r.p("| %s | %s | %d | %s | %s | %s | %s |\n", l, res.Scenario, res.Concurrency, num(res.TurnsPerSec, 0), num(p50(res.Latency), 3), num(p99(res.Latency), 3), errs(res))
	}
	r.p("\n")
}
