package files

// Methods returns the HTTP methods an action of the surface is served on (nil for
// others). With Register it makes the surface an extension of api/actions, which mounts
// it under the action prefix it owns.
func (s *Surface) Methods(action string) []string {
	if _, ok := s.actions[action]; !ok {
		return nil
	}
	return Methods(action)
}
