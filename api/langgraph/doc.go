// Package langgraph serves LangGraph's server API (the routes langgraph-sdk, RemoteGraph
// and LangGraph's UIs call) on the host runtime: an assistant per hosted LangGraph agent,
// threads that are the host's sessions, runs that are its turns, their events streamed in
// LangGraph's stream modes, and interrupts that are the host's approval requests. What is
// offered and what is not is listed in docs/langgraph-api.md.
package langgraph
