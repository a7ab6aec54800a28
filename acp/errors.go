// This file is ACP's one mapping of errors to JSON-RPC errors: the codes, the coded kinds of
// failure (sentinels a handler wraps with what went wrong: fmt.Errorf("%w: cwd is required",
// errInvalidParams) reads "Invalid params: cwd is required"), the session layer's errors, and
// the errors of the client's answers. No other file writes a code or a kind's text.

package acp

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/pid-agent/pid/session"
)

// JSON-RPC error codes pid answers with (ACP's ErrorCode lists them).
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
	codeNotFound       = -32002 // ACP "Resource not found": an unknown session
	// codeAuthRequired is ACP's auth_required: no model, or no usable key for it (auth.go).
	codeAuthRequired = -32000
	// codeRequestFailed is LSP's RequestFailed (ACP takes -32800 from the same range): a
	// valid request that cannot be done now, for the reason its message gives (a session
	// another pid holds).
	codeRequestFailed = -32803
)

// codedError is a kind of failure ACP answers with a code of its own; its text starts the
// message.
type codedError struct {
	code int64
	text string
}

func (e *codedError) Error() string { return e.text }

// The kinds of failure. A handler returns one wrapped (%w) with what went wrong; toWire
// answers the kind's code with the whole text.
var (
	errParse             = &codedError{codeParseError, "Parse error"}
	errInvalidRequest    = &codedError{codeInvalidRequest, "Invalid request"}
	errMethodNotFound    = &codedError{codeMethodNotFound, "Method not found"}
	errInvalidParams     = &codedError{codeInvalidParams, "Invalid params"}
	errInternal          = &codedError{codeInternalError, "Internal error"}
	errNotFound          = &codedError{codeNotFound, "Resource not found"}
	errAuthRequired      = &codedError{codeAuthRequired, "Authentication required"}
	errSessionUnreadable = &codedError{codeRequestFailed, "Session cannot be read"}
	errFolderMissing     = &codedError{codeRequestFailed, "Session folder missing"}
)

// withData is an error answered with data ({sessionId} for an unknown session, as ACP asks).
type withData struct {
	err  error
	data any
}

func (e *withData) Error() string { return e.err.Error() }
func (e *withData) Unwrap() error { return e.err }

// toWire maps an error to the JSON-RPC error sent to the client; no error has code 0. An
// error the client answered one of pid's requests with goes back as it came.
func toWire(err error) *rpcError {
	var re *rpcError
	var ce *codedError
	if ae := authError(err); ae != nil {
		err = ae // auth_required (auth.go)
	}
	switch {
	case errors.As(err, &re):
		return re
	case errors.As(err, &ce):
		e := &rpcError{Code: ce.code, Message: err.Error()}
		var wd *withData
		if errors.As(err, &wd) {
			e.Data = wd.data
		}
		return e
	case errors.Is(err, session.ErrUnknownSession):
		return &rpcError{Code: codeNotFound, Message: errNotFound.text + ": " + err.Error()}
	case errors.Is(err, session.ErrLocked):
		return &rpcError{Code: codeRequestFailed, Message: "Session in use: " + strings.TrimPrefix(err.Error(), session.ErrLocked.Error()+": ")}
	case errors.Is(err, session.ErrInvalid):
		return &rpcError{Code: codeInvalidParams, Message: errInvalidParams.text + ": " + strings.TrimPrefix(err.Error(), session.ErrInvalid.Error()+": ")}
	case errors.Is(err, session.ErrBusy):
		return &rpcError{Code: codeRequestFailed, Message: "Session busy: a prompt is running in this session; wait for it to end or cancel it (session/cancel)"}
	case errors.Is(err, session.ErrUnavailable), errors.Is(err, session.ErrFailed):
		return &rpcError{Code: codeRequestFailed, Message: "Request failed: " + err.Error()}
	}
	return &rpcError{Code: codeInternalError, Message: errInternal.text + ": " + err.Error()}
}

// unavailable is the error of the saved-session methods when pid cannot use its sessions
// folder (initialize then does not advertise them).
func unavailable(method string) error {
	return fmt.Errorf("%w: %s is not available: pid cannot use its sessions folder (see its log), so sessions are not saved", errMethodNotFound, method)
}

// notFound is the error for a session id that names no session: ACP's "Resource not found"
// with data {sessionId}.
func notFound(id, format string, args ...any) error {
	return &withData{err: fmt.Errorf("%w: %s", errNotFound, fmt.Sprintf(format, args...)), data: map[string]string{"sessionId": id}}
}

// clientError is the client's error answer to one of pid's requests, as it came.
func clientError(je *jsonrpc2.Error) error {
	e := &rpcError{Code: je.Code, Message: je.Message}
	if je.Data != nil {
		e.Data = *je.Data
	}
	return e
}

// malformedAnswer is the error for an answer of the client's that is no JSON-RPC response.
func malformedAnswer(msg string) error {
	return &rpcError{Code: codeInternalError, Message: msg}
}
