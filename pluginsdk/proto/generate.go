// Package proto holds the runner protocol definition; the generated Go code lives in
// runner/v1 (package runnerv1).
package proto

//go:generate ./gen.sh
