// Package plumbing exports what a plugin SDK should not: the check must find it.
package plumbing

import (
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// Author is what an author uses.
type Author struct{ Name string }

// Hello is for authors.
func (Author) Hello() string { return "hi" }

// GRPCPlugin is plumbing.
type GRPCPlugin struct{ plugin.NetRPCUnsupportedPlugin }

// Options is plumbing by its signature.
func Options() []grpc.ServerOption { return nil }

// Handshake is a mutable handshake.
var Handshake = plugin.HandshakeConfig{}

const internalOnly = 1
