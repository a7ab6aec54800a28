-- The pieces of the session picker's line (ISO times, relative times, folders) and the
-- transcript of errors and unfinished exchanges.

return function(t)
  local pid = t.pid
  local say, check, eq, text = t.say, t.check, t.eq, t.text

  -- 14. The picker line's pieces.
  local sm = require('pid.sessions')
  local now = sm.parse_time('2026-12-01T12:00:00Z')
  eq(sm.parse_time('2026-12-01T12:00:00.25Z'), now + 0.25, 'fractions of a second')
  check(sm.parse_time('2026-12-01T12:00:00.66Z') > sm.parse_time('2026-12-01T12:00:00.666Z') == false, '.66 is before .666')
  eq(sm.parse_time('2026-12-01T13:30:00+01:30'), now, 'an offset')
  eq(sm.parse_time('1970-01-01T00:00:00Z'), 0, 'the epoch')
  eq(sm.parse_time('2000-03-01T00:00:00Z'), 951868800, 'after a leap day')
  eq(sm.parse_time('yesterday'), nil, 'not a time')
  local function ago_(secs) return os.date('!%Y-%m-%dT%H:%M:%SZ', now - secs) end
  local rel = {}
  for _, secs in ipairs({ 10, -300, 60, 59 * 60, 3 * 3600 + 300, 86400 + 3600, 3 * 86400, 14 * 86400, 65 * 86400, 400 * 86400 }) do
    table.insert(rel, sm.relative_time(ago_(secs), now))
  end
  eq(rel, { 'just now', 'just now', '1 minute ago', '59 minutes ago', '3 hours ago', 'yesterday', '3 days ago', '2 weeks ago', '2 months ago', 'last year' }, 'relative times')
  eq(sm.short_folder('/home/me/src/x', '/home/me'), '~/src/x', 'short folder')
  eq(sm.short_folder('/home/mess', '/home/me'), '/home/mess', 'not under home')
  eq(sm.format_item({ sessionId = 's', cwd = '/home/me/w', title = 'fix\nthe  bug', updatedAt = ago_(3 * 3600), messageCount = 1 },
    { now = now, home = '/home/me', current = 's', workspace = '/home/me/other' }),
    'fix the bug | ~/w | 3 hours ago, 1 message, the current session, another folder: :cd there and :PidStop to resume it', 'a picker line')
  eq(sm.format_item({ sessionId = 't', cwd = '/w/sub', title = '', updatedAt = ago_(0), messageCount = 2 }, { now = now, workspace = '/w' }),
    '(no text) | /w/sub | just now, 2 messages', 'an untitled session in the workspace')
  local tl = pid._transcript_lines({
    { role = 'user', content = text('hi') },
    { role = 'assistant', content = { { type = 'text', text = 'Let me look.' }, { type = 'toolCall', id = 'c', name = 'ls', arguments = vim.empty_dict() } }, stopReason = 'toolUse' },
    { role = 'toolResult', toolCallId = 'c', content = text('a\nb'), isError = false },
    { role = 'assistant', content = {}, stopReason = 'error', errorMessage = 'the provider failed' },
    { role = 'mystery' },
    { role = 'user', content = text('again') },
    { role = 'compaction', summary = '', tokensBefore = 0, firstKeptIndex = 6, reason = 'manual' },
  })
  eq(tl, { '', '>>> hi', 'Let me look.', '[tool] ls {}  ok · b', '[error] the provider failed', '[done] error',
    '', '>>> again', '[compaction] the conversation was compacted (on request); the model now sees this summary instead of the older messages: (empty)',
    '[done] unfinished (pid stopped before the model answered?)' }, 'transcript lines')
  say('ok - picker lines (title | folder | when), ISO times as UTC, transcript lines')
end
