// Package codectest keeps the hand-written codecs of transcript messages honest (issue 33):
// llm/append.go and llm.Message's UnmarshalJSON, store/fastdecode.go and rpc/encode.go each
// name llm.Message's and llm.Content's fields one by one, so a field added to either type is
// dropped by every codec nobody remembered to teach. The tests of those packages round-trip
// the messages Full returns, every field set to a value that is not its zero value, and
// compare what comes back with cmp.Diff; CheckFieldsListed fails when a field of the types is
// in none of the lists below, so a new field cannot slip past the round trip unset.
//
// The entry points are Full and CheckFieldsListed. It is used by tests only.
package codectest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/pid-agent/pid/llm"
)

// MessageFields lists, per role, the fields of llm.Message a message of that role carries
// (llm.Message's doc comment, docs/protocol.md's shapes).
var MessageFields = map[llm.Role][]string{
	llm.RoleUser:       {"Role", "Content", "Timestamp"},
	llm.RoleAssistant:  {"Role", "Content", "StopReason", "Usage", "ErrorMessage", "Timestamp"},
	llm.RoleToolResult: {"Role", "ToolCallID", "ToolName", "Content", "Details", "IsError", "AddedToolNames", "Timestamp"},
}

// ContentFields lists, per block type, the fields of llm.Content a block of that type carries.
var ContentFields = map[llm.ContentType][]string{
	llm.ContentText:     {"Type", "Text"},
	llm.ContentThinking: {"Type", "Thinking", "Signature", "Redacted"},
	llm.ContentToolCall: {"Type", "ID", "Name", "Arguments"},
	llm.ContentImage:    {"Type", "Data", "MimeType"},
}

// Roles and Types are the keys of MessageFields and ContentFields in a fixed order.
var (
	Roles = []llm.Role{llm.RoleUser, llm.RoleAssistant, llm.RoleToolResult}
	Types = []llm.ContentType{llm.ContentText, llm.ContentThinking, llm.ContentToolCall, llm.ContentImage}
)

// CheckFieldsListed fails t for each field of llm.Message that no role lists, each field of
// llm.Content that no block type lists, and each listed name that is no field (a rename).
func CheckFieldsListed(t testing.TB) {
	t.Helper()
	check := func(typ reflect.Type, lists [][]string) {
		listed := map[string]bool{}
		for _, l := range lists {
			for _, f := range l {
				listed[f] = true
				if _, ok := typ.FieldByName(f); !ok {
					t.Errorf("codectest lists %s.%s, which is no field: update the lists", typ.Name(), f)
				}
			}
		}
		for i := range typ.NumField() {
			if f := typ.Field(i); !listed[f.Name] {
				t.Errorf("%s.%s is new: list it in internal/codectest for the roles or block types that carry it, and teach every codec (llm/append.go and UnmarshalJSON, store/fastdecode.go, rpc/encode.go)", typ.Name(), f.Name)
			}
		}
	}
	var msgLists, blockLists [][]string
	for _, r := range Roles {
		msgLists = append(msgLists, MessageFields[r])
	}
	for _, ty := range Types {
		blockLists = append(blockLists, ContentFields[ty])
	}
	check(reflect.TypeFor[llm.Message](), msgLists)
	check(reflect.TypeFor[llm.Content](), blockLists)
}

// Full returns one message per role (in the order of Roles), every field its role carries set
// to a value that is not the zero value: strings name their field (with characters JSON must
// escape), numbers, true, one-entry lists and maps. Its content is one block of every type,
// each with every field its type carries set the same way. It panics on a field of a kind it
// cannot fill, naming it (teach fill).
func Full() []llm.Message {
	var blocks []llm.Content
	for _, ty := range Types {
		var c llm.Content
		fillFields(reflect.ValueOf(&c).Elem(), ContentFields[ty])
		c.Type = ty
		blocks = append(blocks, c)
	}
	var out []llm.Message
	for _, r := range Roles {
		var m llm.Message
		fillFields(reflect.ValueOf(&m).Elem(), MessageFields[r])
		m.Role = r
		m.Content = slices.Clone(blocks)
		out = append(out, m)
	}
	return out
}

func fillFields(v reflect.Value, names []string) {
	for _, name := range names {
		fill(v.FieldByName(name), name)
	}
}

// fill sets v, the field called name, to a value that is not its zero value and survives a
// JSON round trip as it is.
func fill(v reflect.Value, name string) {
	switch v.Type() {
	case reflect.TypeFor[json.RawMessage]():
		v.Set(reflect.ValueOf(json.RawMessage(`{"field":"` + name + `","n":[1,2]}`)))
		return
	case reflect.TypeFor[[]llm.Content](), reflect.TypeFor[llm.Role](), reflect.TypeFor[llm.ContentType]():
		return // set by Full
	case reflect.TypeFor[any]():
		v.Set(reflect.ValueOf(map[string]any{"field": name, "n": float64(3)}))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(name + " \"value\" é\n")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(len(name)) + 1000)
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.String {
			break
		}
		v.Set(reflect.ValueOf([]string{name + " one", name + " two"}).Convert(v.Type()))
		return
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if p.Elem().Kind() != reflect.Struct {
			break
		}
		for i := range p.Elem().NumField() {
			fill(p.Elem().Field(i), p.Elem().Type().Field(i).Name)
		}
		v.Set(p)
		return
	default:
		panic(fmt.Sprintf("codectest: field %s of kind %s: teach fill a value for it", name, v.Kind()))
	}
	if v.Kind() == reflect.Slice || v.Kind() == reflect.Pointer {
		panic(fmt.Sprintf("codectest: field %s of type %s: teach fill a value for it", name, v.Type()))
	}
}
