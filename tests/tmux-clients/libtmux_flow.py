"""libtmux pointed at `fugue tmux` (tests/tests/e2e/tmux_bridge.rs).

argv: TMUX_BIN SERVER_NAME. Makes a session, a window and a split, types into
the split with send_keys, reads it back with capture_pane (polling, as libtmux
users do), lists what is there, kills the pane, the window and the session,
then the server. Prints one JSON object of what it saw.
"""

import json
import sys
import time

import libtmux

tmux_bin, name = sys.argv[1], sys.argv[2]
server = libtmux.Server(socket_name=name, tmux_bin=tmux_bin)
seen = {"version": str(libtmux.common.get_version(tmux_bin=tmux_bin))}

session = server.new_session(session_name="work", window_name="main", x=100, y=30)
window = session.new_window(window_name="second")
pane = window.active_pane
split = pane.split()
seen["ids"] = {"session": session.session_id, "window": window.window_id, "panes": [pane.pane_id, split.pane_id]}
seen["sessions"] = [s.session_name for s in server.sessions]
seen["windows"] = [w.window_name for w in session.windows]
seen["window_panes"] = [p.pane_id for p in window.panes]
seen["split_width"] = split.pane_width
print(json.dumps({"made": seen["ids"]}), flush=True)

split.send_keys("echo hello-from-libtmux")
# Polled: what libtmux users do (and Claude Code's TUI skill): capture until it shows.
deadline = time.monotonic() + 15
captured = []
while time.monotonic() < deadline:
    captured = split.capture_pane()
    if any(line.strip() == "hello-from-libtmux" for line in captured):
        break
    time.sleep(0.1)
seen["captured"] = captured

split.kill()
seen["after_kill_pane"] = [p.pane_id for p in window.panes]
window.kill()
seen["after_kill_window"] = [w.window_name for w in session.windows]
session.kill()
seen["has_session_after_kill"] = server.has_session("work")
server.kill()
print(json.dumps(seen), flush=True)
