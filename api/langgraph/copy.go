package langgraph

import (
	"context"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// copyThread serves POST /threads/{id}/copy: a new thread of the same assistant with the
// thread's conversation, channels, checkpoints and metadata. Its events are imported as
// the runs wrote them, under new run and item ids (ids other surfaces look runs and items
// up by stay the original's); its runs list starts empty, as LangGraph's copy's does.
func (h *Handler) copyThread(c *gin.Context) *apiError {
	ctx, user := c.Request.Context(), h.user(c)
	unlock := h.busy.lock(user + "\x00" + c.Param("tid"))
	defer unlock()
	s, st, e := h.pathSnapshot(c)
	if e != nil {
		return e
	}
	switch st.status {
	case "busy":
		return busyThread()
	case "interrupted":
		return detail(http.StatusConflict, "thread %s is paused on an interrupt: copying it is not offered until it is resumed", s.ID)
	}
	evs, err := h.rt.Events(ctx, s.Key, session.EventQuery{})
	if err != nil {
		return fromHost(h.log, "load thread events", err)
	}
	runs := map[string]string{}
	var imported []session.NewEvent
	for _, ev := range evs {
		switch ev.Type {
		case session.TypeUserMessage, session.TypeAssistantMessage, session.TypeReasoning, session.TypeToolCall,
			session.TypeToolResult, session.TypeStateDelta:
		default:
			continue
		}
		if ev.InvocationID == "" {
			continue // thread metadata, copied below
		}
		run, ok := runs[ev.InvocationID]
		if !ok {
			run = host.NewID("run_")
			runs[ev.InvocationID] = run
		}
		item := ev.ItemID
		if item != "" {
			prefix, _, _ := strings.Cut(item, "_")
			item = host.NewID(prefix + "_")
		}
		imported = append(imported, session.NewEvent{InvocationID: run, ItemID: item, Type: ev.Type, Author: ev.Author,
			Data: ev.Data, StateDelta: ev.StateDelta, Time: ev.Time})
	}
	cp, err := h.rt.CreateSession(ctx, session.Key{App: s.App, User: user})
	if err != nil {
		return fromHost(h.log, "create session", err)
	}
	if len(imported) > 0 {
		if _, err := h.rt.ImportEvents(ctx, cp.Key, imported...); err != nil {
			h.dropCopy(cp.Key)
			return fromHost(h.log, "copy thread events", err)
		}
	}
	if e := h.setMetadata(ctx, cp.Key, st.metadata); e != nil {
		h.dropCopy(cp.Key)
		return e
	}
	if cp, err = h.rt.Session(ctx, cp.Key); err != nil {
		return fromHost(h.log, "load session", err)
	}
	return h.writeThread(c, cp)
}

func (h *Handler) dropCopy(key session.Key) {
	// The request's context may be over; the half-made copy goes anyway.
	if err := h.rt.DeleteSession(context.Background(), key); err != nil {
		h.log.Warn("could not delete a failed thread copy", "thread", key.ID, "error", err)
	}
}
