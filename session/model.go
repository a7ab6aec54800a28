// This file holds a session's model (package sessionmodel makes it from its configuration,
// with what the settings' "models" list adds to a model named by provider and id): swapped
// by SetModel for the next model call and saved as a model entry of the session's file, and
// the models a person may pick from (models/list).

package session

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/pid-agent/pid/history"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/models"
	"github.com/pid-agent/pid/sessionmodel"
	"github.com/pid-agent/pid/store"
)

// sessionModel is a session's model as one value (package sessionmodel makes it): SetModel
// replaces it whole, and nothing modifies it once made, so a caller may keep what
// currentModel returned for a whole model call.
type sessionModel = sessionmodel.Model

// modelKinds are the layer's errors the setup errors of a model stand for.
var modelKinds = sessionmodel.Kinds{NoModel: ErrNoModel, Invalid: ErrInvalid, Failed: ErrFailed}

// modelSettings returns the settings files as a session's model sees them (sessionmodel):
// the host's loader, its reports.
func (h *Host) modelSettings() sessionmodel.Settings {
	return sessionmodel.Settings{Loader: h.loader, Kinds: modelKinds, Report: h.opts.Report, ReportOnce: h.reportOnce}
}

// currentModel returns the session's model now. Safe for concurrent use; the value is never
// modified (SetModel replaces it).
func (s *Session) currentModel() *sessionModel {
	s.model.mu.Lock()
	defer s.model.mu.Unlock()
	return s.model.cur
}

// ModelProblem returns why the session cannot call its model now, as a SetupError: no
// model (noModel, or untrustedSetting when an untrusted workspace folder names one), or a
// model whose API key is neither in pid's environment nor saved by pid login
// (apiKeyMissing); nil when it can. A key saved since the session was made counts (the
// model is made again, and replaces the one without a key). Contract: safe for concurrent
// use; it reads the credentials file and never calls the model.
func (s *Session) ModelProblem() error {
	m := s.currentModel()
	switch {
	case m.Config == nil:
		return s.noModelError()
	case m.Problem != nil:
		again, err := modelKinds.Make(m.Config, m.Source, 0, 0, true)
		if err != nil {
			return m.Problem
		}
		s.model.mu.Lock()
		if s.model.cur == m { // not replaced by SetModel meanwhile
			s.model.cur = again
		}
		s.model.mu.Unlock()
	}
	return nil
}

// UserModelProblem returns why a session the user's settings alone configure could not
// call its model now, as a SetupError: no model in the user settings (noModel), a model
// that is not usable (invalidModel), or one whose API key is neither in pid's environment
// nor saved by pid login (apiKeyMissing); nil when it could. It is what an editor's
// "authenticate" asks after the person ran pid login. Contract: safe for concurrent use;
// it reads the credentials file and never calls the model.
func (h *Host) UserModelProblem() error { return h.modelSettings().UserProblem() }

// SetModel makes the model raw describes (session/new's model shape) the session's model
// from its next model call on: a call under way finishes on the model it started with. A
// model named by provider and id that is an entry of the settings' "models" list gets that
// entry's other members, those raw sets winning. The change is saved with the session (a
// loaded session uses the last model it was set to).
//
// Contract: safe for concurrent use, also while a prompt runs; it does not block on the run.
// It fails, changing nothing, with a SetupError: invalidModel (the message names the member
// at fault) or apiKeyMissing (the key's variable is unset in pid's environment).
func (s *Session) SetModel(raw json.RawMessage) error {
	m, err := s.host.modelSettings().Pick(s.ws.Cwd(), raw)
	if err != nil {
		return err
	}
	s.setModel(m)
	return nil
}

// setModel makes m the session's model, and saves the change (saveModel).
func (s *Session) setModel(m *sessionModel) {
	s.model.mu.Lock()
	s.model.cur = m
	s.model.mu.Unlock()
	s.saveModel(m.Config)
}

// saveModel saves a model change: in the header when the session's file does not exist yet
// and no message was saved (the file will start with it), else as a model entry of the file,
// and in the record of changes a fork of the live session copies.
func (s *Session) saveModel(cfg *ModelConfig) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		s.face.Warn(s, fmt.Sprintf("the model change could not be saved: %v", err))
		return
	}
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	if s.saved.file == nil && len(s.saved.entryIDs) == 0 && len(s.saved.compactions) == 0 {
		s.saved.header.Model = raw
		return
	}
	s.saved.modelChanges = append(s.saved.modelChanges, history.ModelChange{At: len(s.saved.entryIDs), Config: raw})
	if s.saved.file == nil || s.saved.err != nil {
		return
	}
	s.saved.lastWrite.Store(time.Now().UnixNano())
	if _, err := s.saved.file.Append(store.Entry{Kind: store.KindModel, Timestamp: time.Now().UTC(), Model: raw}); err != nil {
		s.saveFailedLocked(err)
	}
}

// ModelInfo is a model as models/list shows it: never more than these (no base URL, no key
// variable).
type ModelInfo = models.Info

// ModelList is models/list's answer.
type ModelList = models.List

// ModelList returns the models a person may pick from for a session (sessionID "": for a
// new session in the first workspace folder), and the model in use: the session's, or the
// one a new session would get (editorDefault, the editor's default model, else the
// settings'). Entries of the lists that are not models are left out, and reported once.
//
// Contract: safe for concurrent use; it reads no file (the settings are the Loader's
// snapshot). An unknown sessionID is ErrUnknownSession.
func (h *Host) ModelList(sessionID string, editorDefault *ModelConfig) (ModelList, error) {
	if sessionID == "" {
		return h.modelSettings().ListNew(h.defaultCwd(), editorDefault), nil
	}
	s, err := h.Get(sessionID)
	if err != nil {
		return ModelList{}, err
	}
	return h.modelSettings().List(s.ws.Cwd(), s.currentModel().Config), nil
}

// listedModels returns the "models" entries of the settings for cwd (models.Parse), the
// user's first, each provider and id once; a malformed entry is reported once per file
// content.
func (h *Host) listedModels(cwd string) []models.Listed { return h.modelSettings().Listed(cwd) }

// reportOnce reports msg about a settings file's content once per daemon (models/list may be
// asked often).
func (h *Host) reportOnce(file string, content json.RawMessage, msg string) {
	key := file + "\x00" + string(content) + "\x00" + msg
	h.mu.Lock()
	done := h.reported[key]
	h.reported[key] = true
	h.mu.Unlock()
	if !done {
		h.opts.Report(msg, false)
	}
}

// defaultCwd is the cwd of a session that names none: the first workspace folder, else
// pid's own working folder.
func (h *Host) defaultCwd() string {
	if roots := h.folders(); len(roots) > 0 {
		return roots[0]
	}
	wd, _ := os.Getwd()
	return wd
}

// keyed returns a copy of req (which may be the loop's) carrying the session's id as its
// CacheKey, which a provider may send so the server keeps the conversation's prompt cache
// in one place (OpenAI's prompt_cache_key). The id survives session/load, so a resumed
// session keeps its key.
func (s *Session) keyed(req *llm.Request) *llm.Request {
	out := *req
	out.CacheKey = s.id
	return &out
}
