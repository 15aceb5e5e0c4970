// Package host is agentengine's conversation runtime: one turn lifecycle shared by every
// protocol surface. It normalises input, creates or loads the session, records the turn in
// the store, calls the agent's runner and journals the run's events so that any number of
// subscribers can follow it, live or after the fact.
package host
