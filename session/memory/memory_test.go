package memory_test

import (
	"testing"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
	"github.com/agentengine/agentengine/session/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) session.Store { return memory.New() })
}
