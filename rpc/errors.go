// This file is the one place where errors become JSON-RPC error codes.

package rpc

import (
	"context"
	"errors"
	"fmt"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/pid-agent/pid/session"
)

// JSON-RPC and LSP error codes pid answers with.
const (
	codeParseError       = -32700
	codeInvalidRequest   = -32600
	codeMethodNotFound   = -32601
	codeInvalidParams    = -32602
	codeInternalError    = -32603
	codeNotInitialized   = -32002 // LSP ServerNotInitialized
	codeRequestFailed    = -32803 // LSP RequestFailed
	codeRequestCancelled = -32800 // LSP RequestCancelled
)

// codedError is an error that knows its JSON-RPC code.
type codedError struct {
	code int64
	msg  string
}

func (e *codedError) Error() string { return e.msg }

// Sentinels; wrap them with fmt.Errorf("%w: ...") to add detail.
var (
	errNotInitialized = &codedError{codeNotInitialized, "the server is not initialized: send initialize first"}
	errShutdown       = &codedError{codeInvalidRequest, "the server is shutting down: only exit is accepted after shutdown"}
	errUnknownMethod  = &codedError{codeMethodNotFound, "method not found"}
	errInvalidParams  = &codedError{codeInvalidParams, "invalid params"}
	errInvalidRequest = &codedError{codeInvalidRequest, "invalid request"}
	errBusy           = &codedError{codeRequestFailed, "a prompt is already running for this session; send more input with session/steer or session/followUp"}
)

// invalidParams returns an invalid-params error with detail.
func invalidParams(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errInvalidParams}, args...)...)
}

// toWire maps an error to the JSON-RPC error sent to the client. Coded errors keep their
// code, a busy agent is RequestFailed, a cancelled request RequestCancelled, a setup problem
// InvalidParams (a model that is not usable) or RequestFailed (the others) with its data,
// pid running out of a resource (too many open files) an internal error saying so, and
// anything else is an internal error: no error reaches the wire with code 0.
func toWire(err error) *jsonrpc2.Error {
	var ce *codedError
	var se *session.SetupError
	switch {
	case errors.As(err, &se):
		code := int64(codeRequestFailed)
		if errors.Is(err, session.ErrInvalid) {
			code = codeInvalidParams
		}
		e := &jsonrpc2.Error{Code: code, Message: err.Error()}
		if d := se.Data(); len(d) > 0 {
			// The data of a setup problem: {reason, setting?, field?, file?, folder?, variable?}.
			e.SetError(d)
		}
		return e
	case errors.Is(err, session.ErrBusy):
		return &jsonrpc2.Error{Code: errBusy.code, Message: errBusy.msg}
	case errors.Is(err, session.ErrResource):
		return &jsonrpc2.Error{Code: codeInternalError, Message: err.Error()}
	case errors.Is(err, session.ErrInvalid), errors.Is(err, session.ErrUnknownSession):
		return &jsonrpc2.Error{Code: codeInvalidParams, Message: err.Error()}
	case errors.Is(err, session.ErrNoModel), errors.Is(err, session.ErrUnavailable), errors.Is(err, session.ErrLocked),
		errors.Is(err, session.ErrFailed):
		return &jsonrpc2.Error{Code: codeRequestFailed, Message: err.Error()}
	case errors.As(err, &ce):
		msg := err.Error()
		return &jsonrpc2.Error{Code: ce.code, Message: msg}
	case errors.Is(err, context.Canceled):
		return &jsonrpc2.Error{Code: codeRequestCancelled, Message: "request cancelled"}
	}
	return &jsonrpc2.Error{Code: codeInternalError, Message: "internal error: " + err.Error()}
}
