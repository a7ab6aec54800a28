// This file holds the job tools: job_output (what a background job printed since the last
// read, waiting for a line if asked) and job_kill (stop a job and give its last output).
// Both act only on the jobs the session started; job_output only looks (read-only, allowed
// in plan mode), and neither needs the person's approval (RunsWithoutAsking).

package tools

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

var jobOutputSchema = schema(`{
  "type": "object",
  "properties": {
    "jobId": {"type": "string", "minLength": 1, "description": "The job's id, as bash with background: true named it (job-3)."},
    "waitFor": {"type": "string", "minLength": 1, "description": "A regular expression (RE2) matched against each new line: wait until one matches (or the job exits, or waitMs passes)."},
    "waitMs": {"type": "number", "minimum": 0, "maximum": 120000, "description": "The longest wait, in milliseconds: for waitFor (default 10000), or, without waitFor, for the job to exit (default: no wait)."},
    "tail": {"type": "integer", "minimum": 1, "description": "Show only the last this many lines of the new output."}
  },
  "required": ["jobId"],
  "additionalProperties": false
}`)

var jobKillSchema = schema(`{
  "type": "object",
  "properties": {
    "jobId": {"type": "string", "minLength": 1, "description": "The job's id (job-3)."}
  },
  "required": ["jobId"],
  "additionalProperties": false
}`)

func jobOutputTool(ws *Workspace) toolexec.Tool {
	return toolexec.Tool{
		Name: NameJobOutput,
		Description: "Read what a background job (bash with background: true) printed since the last read: at most the last 2000 lines (50KB) of it, stdout and stderr together, and whether it still runs or its exit code. " +
			"With waitFor, wait until a new line matches it (or the job exits, or waitMs passes).",
		Parameters: jobOutputSchema,
		Execute: func(ctx context.Context, call toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			var a struct {
				JobID   string   `json:"jobId"`
				WaitFor *string  `json:"waitFor"`
				WaitMs  *float64 `json:"waitMs"`
				Tail    *float64 `json:"tail"`
			}
			if err := decodeArgs(call, &a); err != nil {
				return toolexec.Result{}, err
			}
			var re *regexp.Regexp
			if a.WaitFor != nil {
				var err error
				if re, err = regexp.Compile(*a.WaitFor); err != nil {
					return toolexec.Result{}, failf("waitFor is not a regular expression (RE2 syntax): %v.", err)
				}
			}
			j := ws.Jobs()
			jb, err := j.find(a.JobID)
			if err != nil {
				return toolexec.Result{}, err
			}
			wait := time.Duration(0)
			if re != nil {
				wait = JobDefaultWait
			}
			if a.WaitMs != nil {
				wait = min(time.Duration(*a.WaitMs*float64(time.Millisecond)), JobMaxWait)
			}
			j.mu.Lock()
			from := jb.readAt
			j.mu.Unlock()
			matched, stopped := jb.wait(ctx, re, from, wait, wait > 0)
			if stopped {
				return toolexec.Result{}, ctx.Err()
			}
			j.Observe(ctx)
			r := j.readOut(jb, "", matchedPtr(re, matched), intArg(a.Tail, 0), false)
			return toolexec.Result{Content: []llm.Content{llm.Text(r.text)}, Details: r.det}, nil
		},
	}
}

func jobKillTool(ws *Workspace) toolexec.Tool {
	return toolexec.Tool{
		Name: NameJobKill,
		Description: "Stop a background job: SIGTERM to it and every process it started, SIGKILL 2 seconds later if any is left. " +
			"You get its last output (since the last read) and how it ended.",
		Parameters: jobKillSchema,
		Execute: func(ctx context.Context, call toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			var a struct {
				JobID string `json:"jobId"`
			}
			if err := decodeArgs(call, &a); err != nil {
				return toolexec.Result{}, err
			}
			j := ws.Jobs()
			jb, err := j.find(a.JobID)
			if err != nil {
				return toolexec.Result{}, err
			}
			head := ""
			if j.ended(jb) {
				head = fmt.Sprintf("%s had ended already.", a.JobID)
			}
			if _, err := j.Kill(a.JobID); err != nil {
				return toolexec.Result{}, err
			}
			j.Observe(ctx)
			r := j.readOut(jb, head, nil, 0, false)
			return toolexec.Result{Content: []llm.Content{llm.Text(r.text)}, Details: r.det}, nil
		},
	}
}
