package adkweb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// ADK's evaluations for the dev UI's Eval tab, at the routes of google-adk 2.x
// (/dev/apps/{app}/...) and 1.x (/apps/{app}/...), each in its dashed and its legacy
// underscored spelling. Eval sets and results are the app's documents in the session
// store (kinds adk_eval_set, adk_eval_result: one JSON document each, the eval set
// rewritten as a new version on every change). What needs the agent itself runs in its
// runner with google-adk's own code (host.Runtime.AgentCall, the ADK bridge's
// adk_eval.py): the metrics' descriptions, a session turned into an eval case, and the
// evaluation (inference on the loaded agent, then the metrics).

// Methods of the ADK bridge's Call (adapters/agentengine_adapters/adk_eval.py).
const (
	callEvalMetrics = "adk.eval.metrics"
	callEvalCase    = "adk.eval.case"
	callEvalRun     = "adk.eval.run"
	callEvalFiles   = "adk.eval.files"
)

// evalSetIDPattern is the id ADK's local eval sets manager accepts (it names a file).
var evalSetIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_]+$`)

func (h *Handler) registerEvals(g gin.IRouter) {
	g.GET("/eval_sets", handle(h.listDocs(session.DocADKEvalSet, "", false)))
	g.GET("/eval-sets", handle(h.listDocs(session.DocADKEvalSet, "evalSetIds", true)))
	g.POST("/eval-sets", handle(h.createEvalSet))
	g.POST("/eval_sets/:set", handle(h.createEvalSetLegacy))
	g.GET("/eval-sets/:set", handle(h.getEvalSet))
	g.DELETE("/eval-sets/:set", handle(h.deleteEvalSet))
	g.POST("/eval-sets/:set/add-session", handle(h.addSessionToEvalSet))
	g.POST("/eval_sets/:set/add_session", handle(h.addSessionToEvalSet))
	g.GET("/eval_sets/:set/evals", handle(h.listEvalCases))
	for _, p := range []string{"/eval-sets/:set/eval-cases/:case", "/eval_sets/:set/evals/:case"} {
		g.GET(p, handle(h.getEvalCase))
		g.PUT(p, handle(h.updateEvalCase))
		g.DELETE(p, handle(h.deleteEvalCase))
	}
	g.POST("/eval-sets/:set/run", handle(h.runEval(true)))
	g.POST("/eval_sets/:set/run_eval", handle(h.runEval(false)))
	g.GET("/eval_results", handle(h.listDocs(session.DocADKEvalResult, "", false)))
	g.GET("/eval-results", handle(h.listDocs(session.DocADKEvalResult, "evalResultIds", true)))
	g.GET("/eval_results/:result", handle(h.getEvalResult))
	g.GET("/eval-results/:result", handle(h.getEvalResult))
	g.GET("/metrics-info", handle(h.metricsInfo))
}

// evalSet is a stored eval set: ADK's EvalSet JSON (its own field names), the cases kept
// as ADK wrote them, unknown fields kept.
type evalSet struct {
	fields map[string]json.RawMessage
	ID     string
	Cases  []json.RawMessage
}

func parseEvalSet(data []byte) (*evalSet, error) {
	var s evalSet
	if err := json.Unmarshal(data, &s.fields); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(s.fields["eval_set_id"], &s.ID); err != nil {
		return nil, fmt.Errorf("eval_set_id: %w", err)
	}
	if raw, ok := s.fields["eval_cases"]; ok {
		if err := json.Unmarshal(raw, &s.Cases); err != nil {
			return nil, fmt.Errorf("eval_cases: %w", err)
		}
	}
	return &s, nil
}

func (s *evalSet) marshal() []byte {
	if s.Cases == nil {
		s.Cases = []json.RawMessage{}
	}
	s.fields["eval_cases"], _ = json.Marshal(s.Cases)
	b, _ := json.Marshal(s.fields)
	return b
}

// caseID reads an eval case's id (ADK writes evalId; eval_id is accepted as it is).
func caseID(c json.RawMessage) string {
	var v struct {
		Camel string `json:"evalId"`
		Snake string `json:"eval_id"`
	}
	_ = json.Unmarshal(c, &v)
	if v.Camel != "" {
		return v.Camel
	}
	return v.Snake
}

func (s *evalSet) find(id string) int {
	for i, c := range s.Cases {
		if caseID(c) == id {
			return i
		}
	}
	return -1
}

func evalSetKey(app, id string) session.DocKey {
	return session.DocKey{App: app, Kind: session.DocADKEvalSet, Name: id}
}

// fileEvalSets reads the eval sets of the agent's directory (<id>.evalset.json, ADK's
// file convention) through its runner: nil for agents of other frameworks, and, logged,
// when the runner cannot say.
func (h *Handler) fileEvalSets(c *gin.Context, app string) map[string]json.RawMessage {
	if h.needsADK(app) != nil {
		return nil
	}
	out, err := h.rt.AgentCall(c.Request.Context(), app, callEvalFiles, json.RawMessage("{}"))
	if err != nil {
		h.log.Warn("cannot read the agent's eval set files", "app", app, "error", err)
		return nil
	}
	var files struct {
		Sets map[string]json.RawMessage `json:"eval_sets"`
	}
	if err := json.Unmarshal(out, &files); err != nil {
		h.log.Warn("the runner's eval set files are not what adk_eval.py answers", "app", app, "error", err)
		return nil
	}
	return files.Sets
}

// loadEvalSet reads the app's eval set: the stored one, else the agent directory's file
// of that id (which a change then stores: the project's files are not written); missing
// is nil (the routes answer it each in ADK's words).
func (h *Handler) loadEvalSet(c *gin.Context, app, id string) (*evalSet, *httpError) {
	d, err := h.rt.GetDoc(c.Request.Context(), evalSetKey(app, id), -1)
	if errors.Is(err, host.ErrNotFound) || errors.Is(err, host.ErrInvalidInput) {
		raw, ok := h.fileEvalSets(c, app)[id]
		if !ok {
			return nil, nil
		}
		d.Data = raw
		err = nil
	}
	if err != nil {
		return nil, fromHostError(h.log, "load eval set", err)
	}
	s, err := parseEvalSet(d.Data)
	if err != nil {
		h.log.Error("stored eval set is not ADK's EvalSet", "app", app, "eval_set", id, "error", err)
		return nil, detail(http.StatusInternalServerError, "Internal Server Error")
	}
	return s, nil
}

func (h *Handler) saveEvalSet(c *gin.Context, app string, s *evalSet) *httpError {
	_, err := h.rt.PutDoc(c.Request.Context(), session.Doc{Key: evalSetKey(app, s.ID), MimeType: "application/json", Data: s.marshal()})
	if err != nil {
		return fromHostError(h.log, "save eval set", err)
	}
	return nil
}

func (h *Handler) docNames(c *gin.Context, app, kind string) ([]string, *httpError) {
	names, err := h.rt.DocNames(c.Request.Context(), app, "", "", kind)
	if err != nil {
		return nil, fromHostError(h.log, "list "+kind, err)
	}
	if names == nil {
		names = []string{}
	}
	return names, nil
}

// listDocs serves the ids of the app's eval sets or results: {key: [...]}, or the bare
// list of the legacy routes.
func (h *Handler) listDocs(kind, key string, wrapped bool) func(*gin.Context) *httpError {
	return func(c *gin.Context) *httpError {
		app, aerr := h.app(c)
		if aerr != nil {
			return aerr
		}
		names, aerr := h.docNames(c, app, kind)
		if aerr != nil {
			return aerr
		}
		if kind == session.DocADKEvalSet {
			for id := range h.fileEvalSets(c, app) {
				if !slices.Contains(names, id) {
					names = append(names, id)
				}
			}
			sort.Strings(names)
		}
		if wrapped {
			httpx.WriteJSON(c, http.StatusOK, gin.H{key: names})
		} else {
			httpx.WriteJSON(c, http.StatusOK, names)
		}
		return nil
	}
}

// createEvalSet serves POST eval-sets {"eval_set": {"eval_set_id": ...}} (ADK reads
// only the id) and answers the new, empty EvalSet.
func (h *Handler) createEvalSet(c *gin.Context) *httpError {
	app, aerr := h.app(c)
	if aerr != nil {
		return aerr
	}
	body, aerr := h.readJSON(c)
	if aerr != nil {
		return aerr
	}
	var req struct {
		Snake *struct {
			ID *string `json:"eval_set_id"`
		} `json:"eval_set"`
		Camel *struct {
			ID *string `json:"eval_set_id"`
		} `json:"evalSet"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return notAnObject("body")
	}
	es := req.Snake
	if es == nil {
		es = req.Camel
	}
	if es == nil {
		return invalid("missing", []any{"body", "eval_set"}, "Field required")
	}
	if es.ID == nil {
		return invalid("missing", []any{"body", "eval_set", "eval_set_id"}, "Field required")
	}
	s, aerr := h.newEvalSet(c, app, *es.ID)
	if aerr != nil {
		return aerr
	}
	c.Data(http.StatusOK, "application/json", s.marshal())
	return nil
}

// createEvalSetLegacy serves POST eval_sets/{id}: the same, answered with null.
func (h *Handler) createEvalSetLegacy(c *gin.Context) *httpError {
	app, aerr := h.app(c)
	if aerr != nil {
		return aerr
	}
	if _, aerr := h.newEvalSet(c, app, c.Param("set")); aerr != nil {
		return aerr
	}
	httpx.WriteJSON(c, http.StatusOK, nil)
	return nil
}

func (h *Handler) newEvalSet(c *gin.Context, app, id string) (*evalSet, *httpError) {
	if !evalSetIDPattern.MatchString(id) {
		return nil, detail(http.StatusBadRequest, "Invalid Eval Set ID. Eval Set ID should have the `%s` format", evalSetIDPattern)
	}
	old, aerr := h.loadEvalSet(c, app, id)
	if aerr != nil {
		return nil, aerr
	}
	if old != nil {
		return nil, detail(http.StatusBadRequest, "EvalSet %s already exists for app %s.", id, app)
	}
	idJSON, _ := json.Marshal(id)
	ts, _ := json.Marshal(float64(time.Now().UnixMicro()) / 1e6)
	s := &evalSet{ID: id, fields: map[string]json.RawMessage{
		"eval_set_id": idJSON, "name": idJSON, "creation_timestamp": ts,
	}}
	if aerr := h.saveEvalSet(c, app, s); aerr != nil {
		return nil, aerr
	}
	return s, nil
}

// evalSetOf resolves the route's app and eval set; a missing set is notFound's answer.
func (h *Handler) evalSetOf(c *gin.Context, notFound func(set string) *httpError) (string, *evalSet, *httpError) {
	app, aerr := h.app(c)
	if aerr != nil {
		return "", nil, aerr
	}
	s, aerr := h.loadEvalSet(c, app, c.Param("set"))
	if aerr != nil {
		return "", nil, aerr
	}
	if s == nil {
		return "", nil, notFound(c.Param("set"))
	}
	return app, s, nil
}

func evalSetNotFound(status int) func(string) *httpError {
	return func(set string) *httpError { return detail(status, "Eval set `%s` not found.", set) }
}

// getEvalSet serves GET eval-sets/{id}: the EvalSet.
func (h *Handler) getEvalSet(c *gin.Context) *httpError {
	_, s, aerr := h.evalSetOf(c, evalSetNotFound(http.StatusNotFound))
	if aerr != nil {
		return aerr
	}
	c.Data(http.StatusOK, "application/json", s.marshal())
	return nil
}

// deleteEvalSet serves DELETE eval-sets/{id} (the dev UI's delete button); its results
// stay, as ADK keeps result files. A stored copy of a project's file goes, the file stays.
func (h *Handler) deleteEvalSet(c *gin.Context) *httpError {
	app, aerr := h.app(c)
	if aerr != nil {
		return aerr
	}
	err := h.rt.DeleteDoc(c.Request.Context(), evalSetKey(app, c.Param("set")))
	if errors.Is(err, host.ErrNotFound) || errors.Is(err, host.ErrInvalidInput) {
		if _, ok := h.fileEvalSets(c, app)[c.Param("set")]; ok {
			return detail(http.StatusBadRequest, "Eval set `%s` is the project's file %s.evalset.json, which agentengine does not delete", c.Param("set"), c.Param("set"))
		}
		return evalSetNotFound(http.StatusNotFound)(c.Param("set"))
	}
	if err != nil {
		return fromHostError(h.log, "delete eval set", err)
	}
	httpx.WriteJSON(c, http.StatusOK, nil)
	return nil
}

// listEvalCases serves GET eval_sets/{id}/evals: the case ids, sorted.
func (h *Handler) listEvalCases(c *gin.Context) *httpError {
	_, s, aerr := h.evalSetOf(c, evalSetNotFound(http.StatusBadRequest))
	if aerr != nil {
		return aerr
	}
	ids := make([]string, 0, len(s.Cases))
	for _, cs := range s.Cases {
		ids = append(ids, caseID(cs))
	}
	sort.Strings(ids)
	httpx.WriteJSON(c, http.StatusOK, ids)
	return nil
}

func caseNotFound(set, id string) *httpError {
	return detail(http.StatusNotFound, "Eval set `%s` or Eval `%s` not found.", set, id)
}

// getEvalCase serves GET .../{case}: the EvalCase.
func (h *Handler) getEvalCase(c *gin.Context) *httpError {
	id := c.Param("case")
	_, s, aerr := h.evalSetOf(c, func(set string) *httpError { return caseNotFound(set, id) })
	if aerr != nil {
		return aerr
	}
	i := s.find(id)
	if i < 0 {
		return caseNotFound(s.ID, id)
	}
	c.Data(http.StatusOK, "application/json", s.Cases[i])
	return nil
}

// updateEvalCase serves PUT .../{case} with an EvalCase (the UI's edited conversation):
// it replaces the case, its id the route's.
func (h *Handler) updateEvalCase(c *gin.Context) *httpError {
	id := c.Param("case")
	body, aerr := h.readJSON(c)
	if aerr != nil {
		return aerr
	}
	var upd map[string]json.RawMessage
	if err := json.Unmarshal(body, &upd); err != nil || upd == nil {
		return notAnObject("body")
	}
	if got := caseID(body); got != "" && got != id {
		return detail(http.StatusBadRequest, "Eval id in EvalCase should match the eval id in the API route.")
	}
	if _, ok := upd["conversation"]; !ok {
		if _, ok := upd["conversation_scenario"]; !ok {
			if _, ok := upd["conversationScenario"]; !ok {
				return invalid("missing", []any{"body", "conversation"}, "Field required")
			}
		}
	}
	delete(upd, "eval_id")
	upd["evalId"], _ = json.Marshal(id)
	app, s, aerr := h.evalSetOf(c, func(set string) *httpError {
		return detail(http.StatusNotFound, "Eval set `%s` not found.", set)
	})
	if aerr != nil {
		return aerr
	}
	i := s.find(id)
	if i < 0 {
		return detail(http.StatusNotFound, "Eval case `%s` not found in eval set `%s`.", id, s.ID)
	}
	s.Cases[i], _ = json.Marshal(upd)
	if aerr := h.saveEvalSet(c, app, s); aerr != nil {
		return aerr
	}
	httpx.WriteJSON(c, http.StatusOK, nil)
	return nil
}

// deleteEvalCase serves DELETE .../{case}.
func (h *Handler) deleteEvalCase(c *gin.Context) *httpError {
	id := c.Param("case")
	app, s, aerr := h.evalSetOf(c, evalSetNotFound(http.StatusNotFound))
	if aerr != nil {
		return aerr
	}
	i := s.find(id)
	if i < 0 {
		return detail(http.StatusNotFound, "Eval case `%s` not found in eval set `%s`.", id, s.ID)
	}
	s.Cases = append(s.Cases[:i], s.Cases[i+1:]...)
	if aerr := h.saveEvalSet(c, app, s); aerr != nil {
		return aerr
	}
	httpx.WriteJSON(c, http.StatusOK, nil)
	return nil
}

// addSessionToEvalSet serves add-session {evalId, sessionId, userId}: the stored
// session, in ADK's shape, becomes an eval case in the agent's runner (ADK's conversion
// of its events into invocations) and is added to the set.
func (h *Handler) addSessionToEvalSet(c *gin.Context) *httpError {
	app, aerr := h.app(c)
	if aerr != nil {
		return aerr
	}
	body, aerr := h.readJSON(c)
	if aerr != nil {
		return aerr
	}
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil || req == nil {
		return notAnObject("body")
	}
	field := func(camel, snake string) (string, *httpError) {
		v, ok := req[camel]
		if !ok {
			v, ok = req[snake]
		}
		if !ok {
			return "", invalid("missing", []any{"body", camel}, "Field required")
		}
		s, ok := v.(string)
		if !ok {
			return "", invalid("string_type", []any{"body", camel}, "Input should be a valid string")
		}
		return s, nil
	}
	evalID, aerr := field("evalId", "eval_id")
	if aerr != nil {
		return aerr
	}
	sessID, aerr := field("sessionId", "session_id")
	if aerr != nil {
		return aerr
	}
	user, aerr := field("userId", "user_id")
	if aerr != nil {
		return aerr
	}
	key := session.Key{App: app, User: user, ID: sessID}
	if host.ValidateID(user) != nil || host.ValidateID(sessID) != nil || !callerIs(c, user) {
		return detail(http.StatusNotFound, "Session not found")
	}
	s, aerr := h.loadEvalSet(c, app, c.Param("set"))
	if aerr != nil {
		return aerr
	}
	if s == nil {
		return detail(http.StatusNotFound, "Eval set `%s` not found.", c.Param("set"))
	}
	if s.find(evalID) >= 0 {
		return detail(http.StatusBadRequest, "Eval id `%s` already exists in `%s` eval set.", evalID, s.ID)
	}
	ctx := c.Request.Context()
	sess, err := h.rt.Session(ctx, key)
	if err != nil {
		if errors.Is(err, host.ErrNotFound) {
			return detail(http.StatusNotFound, "Session not found")
		}
		return fromHostError(h.log, "load session", err)
	}
	st, err := h.rt.State(ctx, key)
	if err != nil {
		return fromHostError(h.log, "session state", err)
	}
	evs, err := h.rt.Events(ctx, key, session.EventQuery{})
	if err != nil {
		return fromHostError(h.log, "session events", err)
	}
	arg, _ := json.Marshal(map[string]any{"app_name": app, "user_id": user, "eval_id": evalID, "session": sessionJSON(sess, st, evs)})
	out, err := h.rt.AgentCall(ctx, app, callEvalCase, arg)
	if err != nil {
		return fromHostError(h.log, "eval case from session", err)
	}
	s.Cases = append(s.Cases, json.RawMessage(out))
	if aerr := h.saveEvalSet(c, app, s); aerr != nil {
		return aerr
	}
	httpx.WriteJSON(c, http.StatusOK, nil)
	return nil
}

// runEval serves run {eval_case_ids, eval_metrics}: ADK's evaluator on the agent in its
// runner, the result stored as the app's eval result; the answer is ADK's
// {"runEvalResults": [...]} (the bare list on the legacy route).
func (h *Handler) runEval(wrapped bool) func(*gin.Context) *httpError {
	return func(c *gin.Context) *httpError {
		app, s, aerr := h.evalSetOf(c, evalSetNotFound(http.StatusBadRequest))
		if aerr != nil {
			return aerr
		}
		body, aerr := h.readJSON(c)
		if aerr != nil {
			return aerr
		}
		var req map[string]json.RawMessage
		if err := json.Unmarshal(body, &req); err != nil || req == nil {
			return notAnObject("body")
		}
		pick := func(names ...string) json.RawMessage {
			for _, n := range names {
				if v, ok := req[n]; ok && string(v) != "null" {
					return v
				}
			}
			return nil
		}
		metrics := pick("eval_metrics", "evalMetrics")
		if metrics == nil {
			return invalid("missing", []any{"body", "eval_metrics"}, "Field required")
		}
		var ml []json.RawMessage
		if json.Unmarshal(metrics, &ml) != nil {
			return invalid("list_type", []any{"body", "eval_metrics"}, "Input should be a valid list")
		}
		var ids []string
		if raw := pick("eval_case_ids", "evalCaseIds", "eval_ids", "evalIds"); raw != nil {
			if json.Unmarshal(raw, &ids) != nil {
				return invalid("list_type", []any{"body", "eval_case_ids"}, "Input should be a valid list")
			}
		}
		if ids == nil {
			ids = []string{}
		}
		if v := pick("live_model_config", "liveModelConfig"); v != nil {
			return detail(http.StatusBadRequest, "agentengine does not run live (bidirectional streaming) evaluations: %s", noLive)
		}
		if v := pick("user_simulator_config", "userSimulatorConfig"); v != nil {
			return detail(http.StatusBadRequest, "agentengine does not run evaluations with a user simulator: choose eval cases with a fixed conversation")
		}
		if aerr := h.needsADK(app); aerr != nil {
			return aerr
		}
		arg, _ := json.Marshal(map[string]any{"app_name": app, "eval_set": json.RawMessage(s.marshal()),
			"eval_case_ids": ids, "eval_metrics": json.RawMessage(metrics)})
		out, err := h.rt.AgentCall(c.Request.Context(), app, callEvalRun, arg)
		if err != nil {
			return fromHostError(h.log, "run eval", err)
		}
		var res struct {
			Runs     []json.RawMessage `json:"run_eval_results"`
			Result   json.RawMessage   `json:"eval_set_result"`
			Sessions []evalSession     `json:"sessions"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			h.log.Error("the runner's eval result is not what adk_eval.py answers", "error", err)
			return detail(http.StatusInternalServerError, "Internal Server Error")
		}
		if len(res.Result) > 0 && string(res.Result) != "null" {
			var id struct {
				ID string `json:"evalSetResultId"`
			}
			if json.Unmarshal(res.Result, &id) != nil || id.ID == "" {
				h.log.Error("the runner's eval set result has no id")
				return detail(http.StatusInternalServerError, "Internal Server Error")
			}
			_, err := h.rt.PutDoc(c.Request.Context(), session.Doc{
				Key:      session.DocKey{App: app, Kind: session.DocADKEvalResult, Name: id.ID},
				MimeType: "application/json", Data: res.Result,
			})
			if err != nil {
				return fromHostError(h.log, "save eval result", err)
			}
		}
		for _, es := range res.Sessions {
			h.storeEvalSession(c.Request.Context(), app, es)
		}
		if res.Runs == nil {
			res.Runs = []json.RawMessage{}
		}
		if wrapped {
			httpx.WriteJSON(c, http.StatusOK, gin.H{"runEvalResults": res.Runs})
		} else {
			httpx.WriteJSON(c, http.StatusOK, res.Runs)
		}
		return nil
	}
}

// evalSession is a session ADK's inference ran the agent in, with its events.
type evalSession struct {
	User   string            `json:"user_id"`
	ID     string            `json:"session_id"`
	Events []json.RawMessage `json:"events"`
}

// storeEvalSession keeps an inference session as a session of the app, as `adk web`
// keeps it in its session service: the dev UI opens it from the result to show the
// conversation. Its state changes are left out, so that an evaluation leaves the user's
// and the app's state as they were. A session that cannot be stored is logged: the
// result stands without it.
func (h *Handler) storeEvalSession(ctx context.Context, app string, es evalSession) {
	evs, aerr := importEvents(es.Events, app)
	if aerr != nil {
		h.log.Warn("eval session not stored: its events do not import", "session", es.ID, "error", aerr.Detail)
		return
	}
	kept := evs[:0]
	for _, e := range evs {
		if e.Type == session.TypeStateDelta {
			continue
		}
		e.StateDelta = nil
		kept = append(kept, e)
	}
	key := session.Key{App: app, User: es.User, ID: es.ID}
	if _, err := h.rt.CreateSession(ctx, key); err != nil {
		h.log.Warn("eval session not stored", "session", es.ID, "error", err)
		return
	}
	if len(kept) == 0 {
		return
	}
	if _, err := h.rt.ImportEvents(ctx, key, kept...); err != nil {
		h.log.Warn("eval session's events not stored", "session", es.ID, "error", err)
		if derr := h.rt.DeleteSession(context.WithoutCancel(ctx), key); derr != nil {
			h.log.Error("remove eval session after a failed import", "session", es.ID, "error", derr)
		}
	}
}

// needsADK refuses the runner's eval methods for an agent of another framework.
func (h *Handler) needsADK(app string) *httpError {
	a, err := h.rt.ResolveAgent(app)
	if err != nil {
		return appNotFound(app)
	}
	if a.Framework != "adk" {
		return detail(http.StatusBadRequest, "ADK's evaluations run on google-adk agents; %s is a %s agent", app, a.Framework)
	}
	return nil
}

// getEvalResult serves an eval result (ADK's EvalSetResult).
func (h *Handler) getEvalResult(c *gin.Context) *httpError {
	app, aerr := h.app(c)
	if aerr != nil {
		return aerr
	}
	id := c.Param("result")
	d, err := h.rt.GetDoc(c.Request.Context(), session.DocKey{App: app, Kind: session.DocADKEvalResult, Name: id}, -1)
	if errors.Is(err, host.ErrNotFound) || errors.Is(err, host.ErrInvalidInput) {
		return detail(http.StatusNotFound, "Eval set result `%s` not found.", id)
	}
	if err != nil {
		return fromHostError(h.log, "load eval result", err)
	}
	c.Data(http.StatusOK, "application/json", d.Data)
	return nil
}

// metricsInfo serves metrics-info: the metrics the installed google-adk registers, as
// its registry describes them (computed in the agent's runner). Agents of other
// frameworks have none.
func (h *Handler) metricsInfo(c *gin.Context) *httpError {
	app, aerr := h.app(c)
	if aerr != nil {
		return aerr
	}
	if h.needsADK(app) != nil {
		httpx.WriteJSON(c, http.StatusOK, gin.H{"metricsInfo": []any{}})
		return nil
	}
	out, err := h.rt.AgentCall(c.Request.Context(), app, callEvalMetrics, json.RawMessage("{}"))
	if err != nil {
		return fromHostError(h.log, "metrics info", err)
	}
	c.Data(http.StatusOK, "application/json", out)
	return nil
}
