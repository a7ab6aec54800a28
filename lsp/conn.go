// This file is the connection to one language server over its stdin and stdout: pid's one
// JSON-RPC core (internal/rpcconn) with LSP framing (internal/lspframe), as pid's own faces
// run on. So the house rules hold here too: a frame the server garbles is answered (-32700,
// -32600) and skipped, never the end of the connection; a handler that panics is answered
// with an internal error; the requests a server sends its client are a typed method table
// (methods), decoded once.

package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/pid-agent/pid/internal/lspframe"
	"github.com/pid-agent/pid/internal/rpcconn"
)

// rpcError is an error answer from the server.
type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return "error " + strconv.FormatInt(e.Code, 10) + ": " + e.Message }

// errClosed is returned for requests once the connection has ended.
var errClosed = errors.New("the language server's connection is closed")

// conn is one connection. Its methods are safe for concurrent use.
type conn struct {
	rc *rpcconn.Conn
	// done closes once serve has returned: the server's output has ended and every
	// handler has returned.
	done chan struct{}
}

// newConn returns a connection that writes to w and, once serve runs, reads r: the server's
// notifications go to onNotify and its requests to the entries of methods, on the read
// goroutine.
func newConn(w io.Writer, r io.Reader, log *slog.Logger, onNotify func(string, json.RawMessage), methods map[string]rpcconn.Method) *conn {
	face := rpcconn.Face{
		Codec:   lspframe.NewStream(r),
		Log:     log,
		Methods: methods,
		Decode: func(params json.RawMessage, v any) error {
			if err := rpcconn.DecodeJSON(params, v); err != nil {
				return &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: "invalid params: " + err.Error()}
			}
			return nil
		},
		Admit: func(method string, _ bool) error {
			if _, ok := methods[method]; !ok {
				return &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "pid does not answer " + method}
			}
			return nil
		},
		Notification: func(method string, params json.RawMessage) bool {
			onNotify(method, params)
			return false
		},
		ToWire: func(err error) *jsonrpc2.Error {
			var je *jsonrpc2.Error
			if errors.As(err, &je) {
				return je
			}
			return &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError, Message: err.Error()}
		},
		Marshal:      json.Marshal,
		CancelMethod: "$/cancelRequest",
		CancelField:  "id",
	}
	return &conn{rc: rpcconn.New(face, w), done: make(chan struct{})}
}

// serve reads the server's messages until its output ends, then fails the requests still
// waiting with errClosed. Called once, on a goroutine the Manager owns.
func (c *conn) serve() {
	defer close(c.done)
	_ = c.rc.Serve(context.Background())
}

// call sends a request and waits for its answer, decoded into result (when not nil), or for
// ctx: then the server is sent $/cancelRequest. An error answer is an *rpcError.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	raw, err := c.rc.Call(ctx, method, params, true)
	var je *jsonrpc2.Error
	switch {
	case errors.As(err, &je):
		return &rpcError{Code: je.Code, Message: je.Message}
	case errors.Is(err, rpcconn.ErrClosed):
		return errClosed
	case err != nil:
		return err
	}
	if result != nil && len(raw) > 0 {
		return json.Unmarshal(raw, result)
	}
	return nil
}

// notify sends a notification.
func (c *conn) notify(method string, params any) error {
	return c.rc.Notify(method, params)
}
