package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// Push delivery defaults.
const (
	DefaultPushTimeout = 10 * time.Second
	DefaultPushRetries = 3
	pushBackoff        = 250 * time.Millisecond
	maxPushConfigs     = 10 // per task
)

// tokenHeader carries the token the client set on its push config back to it.
const tokenHeader = "X-A2A-Notification-Token" //nolint:gosec // G101: a header name, not a credential

// pushKey names a task of a user of an agent.
type pushKey struct {
	app, user string
	task      a2a.TaskID
}

// pushes keeps the tasks' push-notification configs (in memory: they last as long as the
// server) and delivers the task to each config's URL when its state changes.
type pushes struct {
	log          hclog.Logger
	client       *http.Client
	retries      int
	allowPrivate bool

	mu      sync.Mutex
	configs map[pushKey][]a2a.PushConfig
	// v1 holds the ids of the configs an A2A 1.0 client set: their webhooks get 1.0's
	// body (a StreamResponse: {"task": …}) too, the others 0.3's (the task) alone.
	v1       map[pushKey]map[string]bool
	followed map[string]bool // runs (session/invocation) a deliverer follows
}

func newPushes(log hclog.Logger, allowPrivate bool, timeout time.Duration, retries int) *pushes {
	if timeout <= 0 {
		timeout = DefaultPushTimeout
	}
	if retries < 0 {
		retries = DefaultPushRetries
	}
	p := &pushes{log: log, retries: retries, allowPrivate: allowPrivate,
		configs: map[pushKey][]a2a.PushConfig{}, v1: map[pushKey]map[string]bool{}, followed: map[string]bool{}}
	dialer := &net.Dialer{Timeout: timeout, Control: p.checkDial}
	p.client = &http.Client{Timeout: timeout, Transport: &http.Transport{
		DialContext: dialer.DialContext, TLSHandshakeTimeout: timeout, ResponseHeaderTimeout: timeout, MaxIdleConnsPerHost: 2,
	}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return p
}

// blockedIP reports whether ip is an address webhooks may not reach unless allowed:
// loopback, private, link-local, unspecified or multicast.
func blockedIP(ip net.IP) bool {
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast()
}

// checkDial refuses connections to blocked addresses, whatever the name resolved to (a
// URL's host may resolve to one only when the notification is sent).
func (p *pushes) checkDial(_, address string, _ syscall.RawConn) error {
	if p.allowPrivate {
		return nil
	}
	h, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(h); ip == nil || blockedIP(ip) {
		return fmt.Errorf("push notification address %s is not allowed", h)
	}
	return nil
}

// validate checks a config's URL: http(s), a host, and unless allowed no loopback,
// private or link-local address (names are checked again when connecting).
func (p *pushes) validate(c *a2a.PushConfig) error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fmt.Errorf("pushNotificationConfig.url must be an http or https URL: %w", a2a.ErrInvalidParams)
	}
	if p.allowPrivate {
		return nil
	}
	h := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	ip := net.ParseIP(h)
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || (ip != nil && blockedIP(ip)) {
		return fmt.Errorf("pushNotificationConfig.url %s is a loopback, private or link-local address, which this server does not notify: %w", quote(c.URL), a2a.ErrInvalidParams)
	}
	return nil
}

// set stores a config of a task (its id defaults to the task id; a config with the same
// id is replaced) and returns it; v1 says a 1.0 client set it.
func (p *pushes) set(k pushKey, c a2a.PushConfig, v1 bool) (a2a.PushConfig, error) {
	if err := p.validate(&c); err != nil {
		return c, err
	}
	if c.ID == "" {
		c.ID = string(k.task)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.configs[k]
	found := false
	for i := range list {
		if list[i].ID == c.ID {
			list[i], found = c, true
		}
	}
	if !found {
		if len(list) >= maxPushConfigs {
			return c, fmt.Errorf("a task has at most %d push notification configs: %w", maxPushConfigs, a2a.ErrInvalidParams)
		}
		p.configs[k] = append(list, c)
	}
	p.markV1(k, c.ID, v1)
	return c, nil
}

// markV1 records (or forgets) that a config is a 1.0 client's; p.mu is held.
func (p *pushes) markV1(k pushKey, id string, v1 bool) {
	switch {
	case v1 && p.v1[k] == nil:
		p.v1[k] = map[string]bool{id: true}
	case v1:
		p.v1[k][id] = true
	default:
		delete(p.v1[k], id)
		if len(p.v1[k]) == 0 {
			delete(p.v1, k)
		}
	}
}

func (p *pushes) isV1(k pushKey, id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.v1[k][id]
}

func (p *pushes) list(k pushKey) []a2a.PushConfig {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]a2a.PushConfig(nil), p.configs[k]...)
}

func (p *pushes) get(k pushKey, id string) (a2a.PushConfig, bool) {
	if id == "" {
		id = string(k.task)
	}
	for _, c := range p.list(k) {
		if c.ID == id {
			return c, true
		}
	}
	return a2a.PushConfig{}, false
}

func (p *pushes) remove(k pushKey, id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.configs[k]
	for i := range list {
		if list[i].ID == id {
			p.configs[k] = append(list[:i:i], list[i+1:]...)
			p.markV1(k, id, false)
			if len(p.configs[k]) == 0 {
				delete(p.configs, k)
			}
			return true
		}
	}
	return false
}

// follow delivers the task when its latest run starts working (if it has not ended yet)
// and when it ends, to the task's configs at that moment. One deliverer per run.
func (p *pushes) follow(t *task, run *host.Run) {
	k := pushKey{app: t.key.App, user: t.key.User, task: t.id}
	id := t.key.ID + "/" + run.InvocationID
	p.mu.Lock()
	if p.followed[id] || len(p.configs[k]) == 0 {
		p.mu.Unlock()
		return
	}
	p.followed[id] = true
	p.mu.Unlock()
	go func() {
		defer func() {
			p.mu.Lock()
			delete(p.followed, id)
			p.mu.Unlock()
		}()
		select {
		case <-run.Done():
		default:
			p.deliver(k, t.snapshot(len(t.runs), nil))
			<-run.Done()
		}
		p.deliver(k, t.snapshot(len(t.runs), nil))
	}()
}

// deliver posts the task to every config of k, each with bounded retries.
func (p *pushes) deliver(k pushKey, task *a2a.Task) {
	body, err := json.Marshal(task)
	if err != nil {
		p.log.Error("a2a push: encode task", "task", task.ID, "error", err)
		return
	}
	// A 1.0 client's webhook gets 1.0's StreamResponse ({"task": …}) inside the 0.3 task
	// JSON: receivers written for either version read it (1.0 readers skip the 0.3
	// members, 0.3 readers the "task" member), whichever SDK the client that set the
	// webhook used for the call.
	both := map[string]any{}
	_ = json.Unmarshal(body, &both)
	both["task"] = v1Task(task)
	v1Body, err := json.Marshal(both)
	if err != nil {
		p.log.Error("a2a push: encode task", "task", task.ID, "error", err)
		return
	}
	for _, c := range p.list(k) {
		b := body
		if p.isV1(k, c.ID) {
			b = v1Body
		}
		if err := p.post(c, b); err != nil {
			p.log.Warn("a2a push notification not delivered", "task", task.ID, "config", c.ID, "state", task.Status.State, "error", err)
		}
	}
}

// post sends body to a config's URL: the token the client gave in X-A2A-Notification-Token,
// its credentials in Authorization. Network errors, 408, 429 and 5xx are retried (with
// growing pauses, at most retries times); other answers are final.
func (p *pushes) post(c a2a.PushConfig, body []byte) error {
	var last error
	for attempt := 0; attempt <= p.retries; attempt++ {
		if attempt > 0 {
			time.Sleep(pushBackoff << (attempt - 1))
		}
		retry, err := p.postOnce(c, body)
		if err == nil {
			return nil
		}
		last = err
		if !retry {
			break
		}
	}
	return last
}

func (p *pushes) postOnce(c a2a.PushConfig, body []byte) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), p.client.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		req.Header.Set(tokenHeader, c.Token)
	}
	if c.Auth != nil && c.Auth.Credentials != "" {
		for _, s := range c.Auth.Schemes {
			switch strings.ToLower(s) {
			case "bearer":
				req.Header.Set("Authorization", "Bearer "+c.Auth.Credentials)
			case "basic":
				req.Header.Set("Authorization", "Basic "+c.Auth.Credentials)
			}
		}
	}
	resp, err := p.client.Do(req)
	if err != nil {
		var op *net.OpError
		// A refused address stays refused.
		return !(errors.As(err, &op) && strings.Contains(op.Err.Error(), "not allowed")), err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return false, nil
	}
	retry = resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
	return retry, fmt.Errorf("webhook answered %s", resp.Status)
}

// pushKeyOf is the key of a task.
func pushKeyOf(t *task) pushKey {
	return pushKey{app: t.key.App, user: t.key.User, task: t.id}
}

// OnSetTaskPushConfig serves tasks/pushNotificationConfig/set.
func (h *handler) OnSetTaskPushConfig(ctx context.Context, p *a2a.TaskPushConfig) (*a2a.TaskPushConfig, error) {
	t, err := h.loadTask(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	c, err := h.s.push.set(pushKeyOf(t), p.Config, isV1Call(ctx))
	if err != nil {
		return nil, err
	}
	if r := t.latest(); r.Status() == session.StatusInProgress {
		h.s.push.follow(t, r)
	}
	return &a2a.TaskPushConfig{TaskID: t.id, Config: c}, nil
}

// OnGetTaskPushConfig serves tasks/pushNotificationConfig/get.
func (h *handler) OnGetTaskPushConfig(ctx context.Context, p *a2a.GetTaskPushConfigParams) (*a2a.TaskPushConfig, error) {
	t, err := h.loadTask(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	c, ok := h.s.push.get(pushKeyOf(t), p.ConfigID)
	if !ok {
		return nil, fmt.Errorf("task %s has no push notification config %s: %w", quote(string(t.id)), quote(p.ConfigID), a2a.ErrInvalidParams)
	}
	return &a2a.TaskPushConfig{TaskID: t.id, Config: c}, nil
}

// OnListTaskPushConfig serves tasks/pushNotificationConfig/list.
func (h *handler) OnListTaskPushConfig(ctx context.Context, p *a2a.ListTaskPushConfigParams) ([]*a2a.TaskPushConfig, error) {
	t, err := h.loadTask(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	out := []*a2a.TaskPushConfig{}
	for _, c := range h.s.push.list(pushKeyOf(t)) {
		out = append(out, &a2a.TaskPushConfig{TaskID: t.id, Config: c})
	}
	return out, nil
}

// OnDeleteTaskPushConfig serves tasks/pushNotificationConfig/delete.
func (h *handler) OnDeleteTaskPushConfig(ctx context.Context, p *a2a.DeleteTaskPushConfigParams) error {
	t, err := h.loadTask(ctx, p.TaskID)
	if err != nil {
		return err
	}
	if !h.s.push.remove(pushKeyOf(t), p.ConfigID) {
		return fmt.Errorf("task %s has no push notification config %s: %w", quote(string(t.id)), quote(p.ConfigID), a2a.ErrInvalidParams)
	}
	return nil
}
