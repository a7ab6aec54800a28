-- Issue 37's network question in Neovim: network/allowHost, as pid sends it, is asked in
-- vim.ui.select (kind 'pid.host') naming the command, the host and the port; Allow, Always
-- allow and Deny answer allow, allowAlways and deny, a dismissal denies; pid.nvim declares
-- networkApproval only because it answers it.

return function(t)
  local check, eq, wait_for, say = t.check, t.eq, t.wait_for, t.say
  local requests = require('pid.requests')
  local network = require('pid.network')
  local params = { sessionId = 's1', toolCallId = 'c1', host = 'registry.npmjs.org', port = 443, command = 'npm install\n  left-pad' }

  local function answer(pick)
    table.insert(t.host_answers, { pick = pick })
    local got
    requests.answer('network/allowHost', params, function(result, err)
      got = { result = result, err = err }
    end, 7)
    wait_for('the answer to network/allowHost', function() return got ~= nil end)
    return got
  end

  local before = #t.selects('pid.host')
  local a = answer(function(items) return 2 end)
  eq(a.result, { decision = 'allowAlways' }, 'Always allow')
  check(a.err == nil, 'no error')
  local asked = t.selects('pid.host')
  eq(#asked, before + 1, 'one question')
  local q = asked[#asked]
  eq(q.shown, network.CHOICES, 'the choices')
  check(q.prompt:find('`npm install left-pad` wants to reach registry.npmjs.org:443', 1, true) ~= nil, 'the prompt names the command and host: %s', q.prompt)
  eq(answer(function() return 1 end).result, { decision = 'allow' }, 'Allow')
  eq(answer(function() return 3 end).result, { decision = 'deny' }, 'Deny')
  eq(answer(function() return nil end).result, { decision = 'deny' }, 'a dismissal denies')
  eq(network.decision(nil), { decision = 'deny' }, 'no index denies')
  say('ok - network/allowHost: asked in vim.ui.select naming the command and the host; Allow, Always allow, Deny and a dismissal answer allow, allowAlways, deny, deny')
end
