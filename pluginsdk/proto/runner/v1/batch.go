package runnerv1

// Events returns the events one RunEvent message carries: a batch's members (a runner
// may send several events as one message), else the message itself. Everything that
// reads a runner's stream goes through it.
func (x *RunEvent) Events() []*RunEvent {
	if b := x.GetBatch(); b != nil {
		return b.GetEvents()
	}
	return []*RunEvent{x}
}
