package postgres

import "time"

// WithDeferWindow sets how long an unobserved start waits for its run's end: the tests
// that count a turn's transactions lengthen it, so that a slow machine cannot make them
// two.
func WithDeferWindow(d time.Duration) Option { return func(c *config) { c.deferWindow = d } }
