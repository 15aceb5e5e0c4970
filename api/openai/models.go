package openai

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// model is an entry of /v1/models: every hosted agent is a model.
type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func (h *Handler) model(name string) model {
	return model{ID: name, Object: "model", Created: h.started, OwnedBy: "agentengine"}
}

// listModels serves GET /v1/models.
func (h *Handler) listModels(c *gin.Context) {
	agents := h.rt.Agents()
	data := make([]model, 0, len(agents))
	for _, a := range agents {
		data = append(data, h.model(a.Name))
	}
	writeJSON(c, http.StatusOK, struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", data})
}

// getModel serves GET /v1/models/{id}.
func (h *Handler) getModel(c *gin.Context) {
	id := c.Param("id")
	for _, a := range h.rt.Agents() {
		if a.Name == id {
			writeJSON(c, http.StatusOK, h.model(a.Name))
			return
		}
	}
	_, err := h.rt.ResolveAgent(id) // words the not-found message with the known agents
	if err == nil {
		writeAPIError(c, notFound("model", "the model %q does not exist", id))
		return
	}
	writeAPIError(c, fromHostError(h.log, "get model", err))
}
