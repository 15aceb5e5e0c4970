package pluginsdk

import "github.com/agentengine/agentengine/wire"

// The documents the host sends with a run and the values a runner sends back are defined
// in package wire, which the host shares; these aliases let an agent name them through
// the SDK alone.
type (
	// Payload is the runner payload (Request.Payload); see wire.Payload.
	Payload = wire.Payload
	// Resume is the answer to a pending approval request; see wire.Resume.
	Resume = wire.Resume
	// SessionContext is the session context (Request.Context); see wire.SessionContext.
	SessionContext = wire.SessionContext
	// PlatformContext is the runtime identity of a turn.
	PlatformContext = wire.PlatformContext
	// Message is one entry of model-facing history.
	Message = wire.Message
	// ContentBlock is one block of user content in Responses-style naming.
	ContentBlock = wire.ContentBlock
	// State is the three state tiers as seen by the session.
	State = wire.State
	// Usage counts the tokens of a run.
	Usage = wire.Usage
	// Checkpoint is a saved thread state the host keeps for the runner.
	Checkpoint = wire.Checkpoint
	// CheckpointWrite is one pending write of a task to a checkpoint.
	CheckpointWrite = wire.CheckpointWrite
	// CheckpointRef names the checkpoint thread a run continues (Payload.ContinueFrom).
	CheckpointRef = wire.CheckpointRef
)
