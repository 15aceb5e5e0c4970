package openai

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
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
func (h *Handler) listModels(c *gin.Context) *apiError {
	agents := h.rt.Agents()
	data := make([]model, 0, len(agents))
	for _, a := range agents {
		data = append(data, h.model(a.Name))
	}
	httpx.WriteJSON(c, http.StatusOK, struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", data})
	return nil
}

// getModel serves GET /v1/models/{id}.
func (h *Handler) getModel(c *gin.Context) *apiError {
	id := c.Param("id")
	for _, a := range h.rt.Agents() {
		if a.Name == id {
			httpx.WriteJSON(c, http.StatusOK, h.model(a.Name))
			return nil
		}
	}
	_, err := h.rt.ResolveAgent(id) // words the not-found message with the known agents
	if err == nil {
		return notFound("model", "the model %q does not exist", id)
	}
	return fromHostError(h.log, "get model", err)
}
