// Package service lets package inprocess reach the runner service pluginsdk builds for a
// Runner without pluginsdk exporting it: a package cannot export to one sibling only, and
// the service (a runnerv1.RunnerServer) is plumbing an agent author never calls. grpc's
// own internal package links its public packages the same way.
package service

import runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"

// New returns the runner service for runner, a pluginsdk.Runner. pluginsdk sets it when
// it is initialised, before any code that imports pluginsdk runs; nothing sets it after.
var New func(runner any) runnerv1.RunnerServer
